import StrataSQLite

// Upserts: `INSERT … ON CONFLICT (target) DO UPDATE SET …` and `… DO NOTHING`.

extension Insert {
    /// `… ON CONFLICT ("a", …) DO UPDATE SET …`: when a row conflicts with an existing one on
    /// the target columns (a primary key or a UNIQUE index), updates the existing row instead.
    ///
    /// The closure assigns columns of the existing row (``Updates``, as in `update`); its second
    /// argument is the row that was proposed (``ExcludedColumns``, SQL's `excluded`):
    ///
    /// ```swift
    /// Player.insert { Player(id: 1, gameID: 1, name: "Ann", score: 5) }
    ///     .onConflict { $0.id } doUpdate: { $0.score += $1.score }
    /// // INSERT INTO "players" (…) VALUES (…)
    /// //   ON CONFLICT ("id") DO UPDATE SET "score" = ("players"."score" + "excluded"."score")
    /// ```
    ///
    /// Several `onConflict` calls add clauses, tried in order. An empty closure has nothing to
    /// update: running the statement throws a `DatabaseError` (`.misuse`), as an update without
    /// assignments does; use ``onConflictDoNothing(_:)`` to skip conflicting rows.
    public func onConflict<each Target>(
        _ target: (Into.TableColumns) -> (repeat TableColumn<Into, each Target>),
        doUpdate assignments: (inout Updates<Into>, ExcludedColumns<Into>) -> Void
    ) -> Self {
        var updates = Updates<Into>()
        assignments(&updates, ExcludedColumns())
        var copy = self
        let names = Self.targetNames(target)
        copy.conflictClauses.append("ON CONFLICT " + names + " DO UPDATE SET " + updates.setList)
        if updates.isEmpty, copy.failure == nil {
            copy.failure = DatabaseError(
                resultCode: .misuse,
                message: "ON CONFLICT … DO UPDATE of \(Into.quotedTableName) has no assignments",
                sql: copy.sql)
        }
        return copy
    }

    /// `… ON CONFLICT ("a", …) DO NOTHING`: skips the rows that conflict on the target columns.
    public func onConflictDoNothing<each Target>(
        _ target: (Into.TableColumns) -> (repeat TableColumn<Into, each Target>)
    ) -> Self {
        var copy = self
        copy.conflictClauses.append("ON CONFLICT " + Self.targetNames(target) + " DO NOTHING")
        return copy
    }

    /// `… ON CONFLICT DO NOTHING`: skips the rows that conflict on any uniqueness constraint.
    public func onConflictDoNothing() -> Self {
        var copy = self
        copy.conflictClauses.append("ON CONFLICT DO NOTHING")
        return copy
    }

    private static func targetNames<each Target>(
        _ target: (Into.TableColumns) -> (repeat TableColumn<Into, each Target>)
    ) -> QueryFragment {
        var names: [String] = []
        for column in repeat each target(Into.columns) {
            names.append(column.name.quotedIdentifier)
        }
        return QueryFragment(verbatim: "(" + names.joined(separator: ", ") + ")")
    }
}

extension PrimaryKeyedTable {
    /// Inserts records, or overwrites the rows with the same primary key:
    /// `INSERT … ON CONFLICT ("id") DO UPDATE SET "column" = "excluded"."column", …` for every
    /// written column but the key (`DO NOTHING` for a table of key columns only).
    ///
    /// ```swift
    /// try Player.upsert { player }.execute(db)
    /// ```
    public static func upsert(@InsertValuesBuilder<Self> _ records: () -> [Self]) -> Insert<Self, ()> {
        insert(records).upserting()
    }

    /// Inserts drafts, or overwrites the rows with the same primary key. A draft with a nil key
    /// always inserts a new row, with a key SQLite assigns.
    ///
    /// ```swift
    /// try Player.upsert { Player.Draft(id: editedID, gameID: 1, name: "Ann") }.execute(db)
    /// ```
    public static func upsert(@InsertValuesBuilder<Draft> _ drafts: () -> [Draft]) -> Insert<Self, ()> {
        insert(drafts).upserting()
    }
}

extension Insert where Into: PrimaryKeyedTable {
    /// The clause of ``PrimaryKeyedTable/upsert(_:)``.
    func upserting() -> Self {
        let key = Into.columns.primaryKey.name
        let assignments = Into.columnNames.filter { $0 != key }.map { name in
            name.quotedIdentifier + " = " + "excluded".quotedIdentifier + "." + name.quotedIdentifier
        }
        var clause = "ON CONFLICT (" + key.quotedIdentifier + ") "
        clause += assignments.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + assignments.joined(separator: ", ")
        var copy = self
        copy.conflictClauses.append(QueryFragment(verbatim: clause))
        return copy
    }
}
