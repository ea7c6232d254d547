import StrataSQLite
import StrataTestSupport
import Testing

/// One registration with a change hub can be checked on its own, without the hub-wide count.
@Suite(.timeLimit(.minutes(5))) struct ChangeRegistrationTests {
    @Test func cancellingOneRegistrationLeavesTheOthersActive() {
        let hub = DatabaseChangeHub()
        let players = hub.addObserver(region: DatabaseRegion(tables: ["players"]), onChange: {})
        let everything = hub.addObserver(region: .fullDatabase, onChange: {})
        #expect(players.isActive)
        #expect(everything.isActive)

        players.cancel()
        #expect(!players.isActive)
        #expect(everything.isActive)
        #expect(hub.observerCount == 1)

        // Cancelling twice is harmless and does not touch the other registration.
        players.cancel()
        #expect(everything.isActive)
        #expect(hub.observerCount == 1)
    }

    @Test func aCancelledRegistrationIsNoLongerCalled() {
        let hub = DatabaseChangeHub()
        let calls = SharedCounter()
        let registration = hub.addObserver(region: .fullDatabase) { calls.value.add(1, ordering: .relaxed) }
        hub.notifyAll()
        registration.cancel()
        hub.notifyAll()
        #expect(!registration.isActive)
        #expect(calls.value.load(ordering: .relaxed) == 1)
    }

    @Test func updatingTheRegionKeepsTheRegistrationActive() {
        let hub = DatabaseChangeHub()
        let registration = hub.addObserver(region: .fullDatabase, onChange: {})
        registration.update(region: DatabaseRegion(tables: ["players"]))
        #expect(registration.isActive)
    }
}
