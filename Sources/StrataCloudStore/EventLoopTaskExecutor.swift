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
/// The work between statements runs on the event loop too, as NIO's own handlers do, and
/// the loop's other channels wait for it. None of it waits synchronously, and the work a page's
/// size (reading its records into values, writing its JSON) is done after the transaction,
/// off the loop. What stays on it grows with a request: decoding a page's rows, and a
/// modify's statement arrays (a first sync's batch of 1,000 records).
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // `self` is held until the job ran: an unowned executor reference is valid only while
        // the executor lives.
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
