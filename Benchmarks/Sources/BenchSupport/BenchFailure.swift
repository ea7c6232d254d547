/// A benchmark that cannot go on: a wrong count, a failed step, a bad argument.
public struct BenchFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
