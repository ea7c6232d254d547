/// The scoreboards `watch` has printed, so a scripted change can wait until its effect is on
/// screen before the next one: the output then shows one frame per change, whatever the clock.
actor FrameLog {
    private var latest: Scoreboard?
    private var waiters: [(expected: Scoreboard, continuation: CheckedContinuation<Void, Never>)] = []

    func record(_ scoreboard: Scoreboard) {
        latest = scoreboard
        let ready = waiters.filter { $0.expected == scoreboard }
        waiters.removeAll { $0.expected == scoreboard }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `scoreboard` is the last one printed. The observation always delivers the
    /// newest value eventually, so this cannot wait forever while the printer runs.
    func waitUntilShown(_ scoreboard: Scoreboard) async {
        if latest == scoreboard { return }
        await withCheckedContinuation { continuation in
            waiters.append((scoreboard, continuation))
        }
    }
}
