import NIOCore

/// A task executor that runs jobs on one NIO event loop. ``CloudStore``'s transactions prefer
/// the event loop of the connection they hold, so their work stays on the thread that reads
/// and writes that connection.
///
/// Otherwise every statement crosses threads twice: the request's task, on Swift's
/// cooperative pool, hands the statement to the connection's event loop, which must be woken
/// to write it, and the answer, read on the event loop, resumes the task on the pool, whose
/// thread must be woken in turn. On this two-core machine a thread woken from idle costs tens
/// of microseconds, and a push makes about a dozen statements: with the preference, a
/// transaction from its connection to its commit took 1.60–1.76 ms where it took 1.96–2.46 ms
/// (medians of about 1,500 transactions each, in three interleaved pairs of the push
/// benchmark; issue #27). On the connection's own loop both hand-overs are queue appends on the
/// running thread.
///
/// The work between statements (decoding rows, building a page or a write's arrays) runs on
/// the event loop too, as NIO's own handlers do. None of it waits synchronously, so the
/// loop's other channels wait at most for that CPU work.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        eventLoop.execute {
            job.runSynchronously(on: executor)
        }
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
