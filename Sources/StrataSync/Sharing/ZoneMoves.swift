import StrataSQLite

/// Moves records between zones when their parent lives in another one: a child moved from a
/// private parent to a parent another user shared (or back) goes to that parent's zone, with
/// everything under it, because a cloud record never changes zones and a parent and its
/// children must share one.
///
/// A move saves each record of the subtree as new in the parent's zone, and remembers the old
/// copies in `moved_records`; they are deleted from their old zone only once nothing waits to
/// be sent, so a crash or a failed request at any point leaves a copy in the cloud.
enum ZoneMoves {
    /// Moves `name` and its subtree to `zone`, the zone of its new parent `parent`.
    static func move(_ name: RecordName, under parent: RecordName, to zone: CloudZoneID, schema: SyncSchema, in db: Database) throws {
        let transaction = try RecordMetadata.fetch(name, in: db)?.pendingTransaction
        let permission: String? =
            try db.fetchOne(
                sql:
                    "SELECT sharePermission FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE recordType = ? AND recordPrimaryKey = ?",
                arguments: [parent.table, parent.primaryKey]
            ) { row -> String? in try row[0] } ?? nil
        for (member, depth) in try subtree(of: name, schema: schema, in: db) {
            var metadata = try RecordMetadata.fetch(member, in: db) ?? RecordMetadata(name: member, zone: zone)
            // Moved back before the old copy went: that copy is the one to keep updating.
            try db.execute(
                sql: "DELETE FROM \(MetadatabaseTable.movedRecords.qualifiedName) WHERE zoneName = ? AND ownerName = ? AND recordName = ?",
                arguments: [zone.name, zone.owner, member.text])
            if metadata.zone != zone && metadata.serverChangeTag != nil {
                try db.execute(
                    sql:
                        "INSERT OR REPLACE INTO \(MetadatabaseTable.movedRecords.qualifiedName) (recordName, zoneName, ownerName, depth) VALUES (?, ?, ?, ?)",
                    arguments: [member.text, metadata.zone.name, metadata.zone.owner, depth])
            }
            if metadata.zone != zone { metadata.serverChangeTag = nil }
            metadata.zone = zone
            metadata.pendingOperation = .save
            metadata.pendingRevision += 1
            metadata.pendingTransaction = transaction ?? metadata.pendingTransaction
            try metadata.save(in: db)
            try db.execute(
                sql:
                    "UPDATE \(MetadatabaseTable.metadata.qualifiedName) SET sharePermission = ? WHERE recordType = ? AND recordPrimaryKey = ?",
                arguments: [permission, member.table, member.primaryKey])
        }
    }

    /// A record and the rows under it, through the synced tables' foreign keys (rows not sent
    /// yet included), with their depth below the record.
    static func subtree(of name: RecordName, schema: SyncSchema, in db: Database) throws -> [(RecordName, Int)] {
        var result: [(RecordName, Int)] = []
        var queue = [(name, 0)]
        var seen: Set<RecordName> = []
        while !queue.isEmpty {
            let (next, depth) = queue.removeFirst()
            guard seen.insert(next).inserted else { continue }
            result.append((next, depth))
            for child in schema.tables where child.parent?.parentTable == next.table {
                guard let reference = child.parent else { continue }
                let keys = try String.fetchAll(
                    db,
                    sql: """
                        SELECT CAST(\(child.primaryKey.quotedIdentifier) AS TEXT) FROM main.\(child.name.quotedIdentifier)
                        WHERE \(reference.column.quotedIdentifier) = ?
                        """,
                    arguments: [next.primaryKey])
                queue += keys.map { (RecordName(table: child.name, primaryKey: $0), depth + 1) }
            }
        }
        return result
    }

    /// The old copies waiting to be deleted, deepest first (children go before their parents),
    /// at most `limit`.
    static func pendingDeletes(limit: Int, in db: Database) throws -> [CloudRecordID] {
        try db.fetchAll(
            sql:
                "SELECT recordName, zoneName, ownerName FROM \(MetadatabaseTable.movedRecords.qualifiedName) ORDER BY depth DESC, recordName LIMIT ?",
            arguments: [limit]
        ) { row in CloudRecordID(name: try row[0], zone: CloudZoneID(name: try row[1], owner: try row[2])) }
    }

    /// Forgets an old copy: deleted, or deleted already.
    static func forget(_ id: CloudRecordID, in db: Database) throws {
        try db.execute(
            sql: "DELETE FROM \(MetadatabaseTable.movedRecords.qualifiedName) WHERE zoneName = ? AND ownerName = ? AND recordName = ?",
            arguments: [id.zone.name, id.zone.owner, id.name])
    }

    /// Whether `id` is an old copy of a moved record (its deletion must not delete the row).
    static func isOldCopy(_ id: CloudRecordID, in db: Database) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql:
                "SELECT EXISTS (SELECT 1 FROM \(MetadatabaseTable.movedRecords.qualifiedName) WHERE zoneName = ? AND ownerName = ? AND recordName = ?)",
            arguments: [id.zone.name, id.zone.owner, id.name]) ?? false
    }
}
