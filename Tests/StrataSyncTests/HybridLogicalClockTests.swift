import StrataSync
import StrataSyncTestSupport
import Testing

/// The clock never goes backwards, orders events within a millisecond, and orders every local
/// event after the remote ones it has seen, whatever the wall clocks say.
@Suite(.timeLimit(.minutes(5))) struct HybridLogicalClockTests {
    @Test func timestampsIncreaseEvenWhenTheWallClockStandsStillOrGoesBack() {
        let time = ManualWallClock(5_000)
        let clock = HybridLogicalClock(node: "a", physicalTime: time.read)
        let first = clock.next()
        let second = clock.next()
        time.set(4_000)  // the wall clock went backwards
        let third = clock.next()
        #expect(first < second && second < third)
        #expect(third.milliseconds == 5_000 && third.counter == 2)
        time.set(6_000)
        #expect(clock.next() == HybridTimestamp(milliseconds: 6_000, counter: 0, node: "a"))
    }

    @Test func aDeviceWhoseClockIsHoursBehindStillOrdersItsLaterEditsAfterWhatItSaw() {
        let hours: Int64 = 3 * 3_600_000
        let ahead = HybridLogicalClock(node: "fast", physicalTime: ManualWallClock(10 * hours).read)
        let behindTime = ManualWallClock(7 * hours)
        let behind = HybridLogicalClock(node: "slow", physicalTime: behindTime.read)
        let remoteEdit = ahead.next()
        let drift = behind.observe(remoteEdit)
        let laterLocalEdit = behind.next()
        #expect(laterLocalEdit > remoteEdit)  // a wall-clock rule would have it lose by 3 hours
        #expect(drift == .milliseconds(3 * hours))  // and the drift is reported, not silent
    }

    @Test func observingAnOlderTimestampStillAdvances() {
        let clock = HybridLogicalClock(node: "b", physicalTime: ManualWallClock(1_000).read)
        let local = clock.next()
        #expect(clock.observe(HybridTimestamp(milliseconds: 500, counter: 9, node: "z")) == nil)
        #expect(clock.next() > local)
    }

    @Test func tiesBreakByNodeAndTheTextFormRoundTrips() {
        let a = HybridTimestamp(milliseconds: 7, counter: 1, node: "a")
        let b = HybridTimestamp(milliseconds: 7, counter: 1, node: "b")
        #expect(a < b)
        #expect(HybridTimestamp(a.description) == a)
    }

    /// The text form is parsed by bytes, to the wire format's pattern
    /// `^-?[0-9]{1,18}\.[0-9]{1,9}@.+$`: a node starting with an emoji modifier or a combining
    /// mark (which joins "@" into one Character) parses; signs, spaces and over-long digit runs
    /// that `Int64.init(_:)` would take do not.
    @Test func theTextFormParsesByBytesToTheWirePattern() {
        #expect(HybridTimestamp("-7.3@\u{1F3FB}x") == HybridTimestamp(milliseconds: -7, counter: 3, node: "\u{1F3FB}x"))
        #expect(HybridTimestamp("1.2@\u{301}") == HybridTimestamp(milliseconds: 1, counter: 2, node: "\u{301}"))
        #expect(HybridTimestamp("123456789012345678.999999999@n")?.counter == 999_999_999)
        #expect(HybridTimestamp("1.2@a@b")?.node == "a@b")
        for text in [
            "+1.2@n", " 1.2@n", "1.2@", "1.@n", ".2@n", "1234567890123456789.1@n", "1.1234567890@n", "1\u{301}.2@n", "1.2n", "-.1@n",
            "--1.2@n",
        ] {
            #expect(HybridTimestamp(text) == nil, "\(text)")
        }
    }

    @Test func aRestoredClockContinuesAfterItsLastTimestamp() {
        let last = HybridTimestamp(milliseconds: 9_000, counter: 4, node: "c")
        let clock = HybridLogicalClock(node: "c", physicalTime: ManualWallClock(1_000).read, restoring: last)
        #expect(clock.next() > last)
    }

    @Test func aFullCounterMovesToTheNextMillisecondAndStaysOrdered() {
        let remote = HybridTimestamp(milliseconds: 5_000, counter: UInt32.max, node: "z")
        let clock = HybridLogicalClock(node: "c", physicalTime: ManualWallClock(1_000).read)
        clock.observe(remote)
        let next = clock.next()
        #expect(next > remote)
        #expect(next.counter < HybridTimestamp.counterLimit)
        var previous = next
        for _ in 0..<3 {
            let later = clock.next()
            #expect(later > previous)
            previous = later
        }
    }

    @Test func packedTimesOrderLikeTimestampsAndRoundTrip() {
        let clock = HybridLogicalClock(node: "c", physicalTime: ManualWallClock(1_700_000_000_000).read)
        let packed = (0..<5).map { _ in clock.nextPackedTime() }
        #expect(packed == packed.sorted() && Set(packed).count == 5)
        let timestamp = HybridTimestamp(milliseconds: 1_700_000_000_123, counter: 77, node: "c")
        #expect(HybridTimestamp(packedTime: timestamp.packedTime, node: "c") == timestamp)
        #expect(HybridTimestamp(packedTime: packed[4], node: "c") == clock.lastTimestamp)
    }
}
