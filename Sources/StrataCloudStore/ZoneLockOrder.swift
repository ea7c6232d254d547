import StrataCloud

/// The one order in which a request locks several zones' rows: by owner, then by name, each
/// compared by its UTF-8 bytes, as `ORDER BY … COLLATE "C"` sorts them in PostgreSQL.
///
/// Two requests that lock the same two rows in opposite orders deadlock, and PostgreSQL
/// breaks the cycle only after `deadlock_timeout` (1 s by default) by failing one of them.
/// Swift's `<` compares canonical forms (`"e\u{301}"` sorts as `"é"`, after `"f"`), and a
/// database's own collation may sort `"B"` after `"a"`: neither is the bytes' order.
///
/// Every lock a request takes follows from it: zones first, in this order (an upload's
/// assets instead, by the bytes of their hashes); then the owner's user row (stored bytes, the
/// database feed), once; then what hangs off a zone (its shares and their participants).
enum ZoneLockOrder {
    /// `zones` once each, in lock order.
    static func sorted(_ zones: [CloudZoneID]) -> [CloudZoneID] {
        Array(Set(zones)).sorted(by: precedes)
    }

    static func precedes(_ lhs: CloudZoneID, _ rhs: CloudZoneID) -> Bool {
        if !lhs.owner.hasSameBytes(as: rhs.owner) { return lhs.owner.utf8.lexicographicallyPrecedes(rhs.owner.utf8) }
        return lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8)
    }
}
