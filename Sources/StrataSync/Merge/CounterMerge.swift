import Foundation
import StrataSQLite

/// The decisions for a counter column (``MergePolicy/counter(table:column:)``), apart from
/// the reading and writing: what a local edit adds to this device's lane, and what an incoming
/// record makes of the local value. No database: unit-tested alone (CounterMergeTests).
///
/// The invariant the engine keeps: once the change log is drained, a row's counter value is
/// the total of its state. Local edits move the value; draining gives the difference to this
/// device's lane. Incoming records merge lane by lane, and the engine writes the new total.
enum CounterMerge {
    /// Why a counter cannot be merged; the engine names the table, column and row
    /// (``CounterMergeError``).
    enum Failure: Error, Equatable {
        case overflow
        case notAnInteger(String)
        case malformedState(String)
    }

    /// What an incoming record says of a counter column.
    struct Incoming: Equatable {
        /// The column's plain value; nil when the record does not carry the column.
        var value: CloudValue?
        /// The counter field (``CounterState/fieldName(of:)``); nil from a writer that does not
        /// know the counter.
        var state: CloudValue?
        /// The column's version.
        var version: HybridTimestamp?
    }

    /// What the column and its state become.
    struct Outcome: Equatable {
        /// The value to write: the total, or NULL when the total is 0 and the record says
        /// NULL (NULL counts as 0, and a row set to NULL reads NULL everywhere); nil keeps the
        /// local value.
        var value: CloudValue?
        /// The state to keep; nil keeps none.
        var state: CounterState?
        /// The column's version from now on.
        var version: HybridTimestamp?
        /// Whether this device's state holds lanes the cloud lacks: the record must be sent.
        var localWins: Bool
    }

    /// What this device knew of the counter before a change: its stored state, or else the
    /// state of the last record the cloud returned (a row synced before the column became a
    /// counter); nil when it knows none.
    static func knownState(stored: CounterState?, lastKnown: Incoming?) throws(Failure) -> CounterState? {
        if let stored { return stored }
        guard let lastKnown, let value = lastKnown.value else { return nil }
        return try described(lastKnown, value: value)
    }

    /// The state after local edits brought the column to `value` (draining the change log).
    /// A row with no known state starts one whose base is its value, at `createdVersion` (its
    /// insert's, or the oldest for seeded rows, so that what the cloud holds wins).
    static func afterLocalEdit(
        known: CounterState?, value: DatabaseValue, createdVersion: HybridTimestamp, device: String,
        nextVersion: () -> HybridTimestamp
    ) throws(Failure) -> CounterState {
        let integer = try self.integer(value)
        guard let known else { return CounterState.created(value: integer, version: createdVersion) }
        do {
            return try known.folding(value: integer, device: device, version: nextVersion)
        } catch {
            throw .overflow
        }
    }

    /// Merges an incoming record's counter into the local row.
    ///
    /// - Parameters:
    ///   - local: the row's value, or nil when there is no row.
    ///   - localVersion: the column's local version; nil when this device never edited nor
    ///     received it (the incoming state is taken as it is).
    ///   - known: ``knownState(stored:lastKnown:)``.
    static func apply(
        local: DatabaseValue?, localVersion: HybridTimestamp?, known: CounterState?, incoming: Incoming, device: String,
        nextVersion: () -> HybridTimestamp
    ) throws(Failure) -> Outcome {
        var mine: CounterState?
        if let local, let localVersion {
            // Normally the drain already gave every local edit to this device's lane, and
            // this changes nothing.
            mine = try afterLocalEdit(
                known: known, value: local, createdVersion: localVersion, device: device, nextVersion: nextVersion)
        }
        guard let value = incoming.value else {
            // An older app version without the column: the local value stays, and goes again.
            return Outcome(value: nil, state: mine, version: localVersion, localWins: mine != nil)
        }
        let theirs = try described(incoming, value: value)
        let merged = mine.map { $0.merged(with: theirs) } ?? theirs
        let total: Int64
        do {
            total = try merged.total()
        } catch {
            throw .overflow
        }
        let version = mine == nil ? incoming.version : [localVersion, incoming.version].compactMap { $0 }.max()
        let written: CloudValue = total == 0 && value == .null ? .null : .integer(total)
        return Outcome(value: written, state: merged, version: version, localWins: mine != nil && merged != theirs)
    }

    /// The state a record describes (``CounterState/described(carried:plainValue:plainVersion:)``).
    static func described(_ incoming: Incoming, value: CloudValue) throws(Failure) -> CounterState {
        let carried = try decode(incoming.state)
        let plain = try integer(value)
        do {
            return try CounterState.described(carried: carried, plainValue: plain, plainVersion: incoming.version)
        } catch {
            throw .overflow
        }
    }

    /// The counter field's value for a state.
    static func encode(_ state: CounterState) -> CloudValue {
        .text((try? SyncJSON.encode(state)) ?? "{}")
    }

    /// The state in a counter field; nil for none.
    static func decode(_ field: CloudValue?) throws(Failure) -> CounterState? {
        switch field {
        case nil, .null?: return nil
        case .text(let text)?:
            do {
                return try SyncJSON.decode(CounterState.self, from: text)
            } catch {
                throw .malformedState("\(error)")
            }
        case let other?: throw .malformedState("\(other.kindName), not JSON text")
        }
    }

    /// A column value as a counter's integer: NULL counts as 0; a REAL that is a whole number
    /// is one (SQLite may hand back 2.0 for an INTEGER column written as a REAL).
    static func integer(_ value: DatabaseValue) throws(Failure) -> Int64 {
        switch value {
        case .null: return 0
        case .integer(let integer): return integer
        case .real(let real):
            guard let integer = Int64(exactly: real) else { throw .notAnInteger(String(real)) }
            return integer
        case .text(let text): throw .notAnInteger("the text \"\(text.prefix(40))\"")
        case .blob(let data): throw .notAnInteger("a BLOB of \(data.count) bytes")
        }
    }

    /// ``integer(_:)-(DatabaseValue)`` of a cloud value.
    static func integer(_ value: CloudValue) throws(Failure) -> Int64 {
        switch value {
        case .asset(let reference): throw .notAnInteger("an asset \(reference.hash.prefix(12))")
        default: return try integer(value.databaseValue)
        }
    }
}
