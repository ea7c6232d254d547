import CSQLite

extension Database {
    /// Adds a listener for this connection's row changes, commits and rollbacks. The connection
    /// keeps a strong reference until ``remove(transactionListener:)`` or until it closes.
    public func add(transactionListener: any TransactionListener) {
        confinement.check("Database.add(transactionListener:)")
        transactionListeners.append(transactionListener)
        if transactionListener.observesRowChanges { rowChangeListeners.append(transactionListener) }
        installHooksIfNeeded()
    }

    /// Removes a listener added with ``add(transactionListener:)``.
    public func remove(transactionListener: any TransactionListener) {
        confinement.check("Database.remove(transactionListener:)")
        transactionListeners.removeAll { $0 === transactionListener }
        rowChangeListeners.removeAll { $0 === transactionListener }
    }

    /// Installs SQLite's update, commit and rollback hooks, once per connection.
    ///
    /// The hooks serve the change tracker (writers) and the transaction listeners, which is why
    /// nobody else may call `sqlite3_update_hook` and friends on a Strata connection.
    func installHooksIfNeeded() {
        guard !hooksInstalled else { return }
        hooksInstalled = true
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(
            handle,
            { context, operation, schema, table, rowID in
                guard let context, let schema, let table else { return }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                database.changeTracker?.rowChanged(schema: schema, table: table)
                guard !database.rowChangeListeners.isEmpty else { return }
                let kind: RowChange.Kind =
                    switch operation {
                    case SQLITE_INSERT: .insert
                    case SQLITE_DELETE: .delete
                    default: .update
                    }
                let change = RowChange(kind: kind, schemaName: String(cString: schema), tableName: String(cString: table), rowID: rowID)
                for listener in database.rowChangeListeners {
                    listener.rowDidChange(change)
                }
            }, context)
        sqlite3_commit_hook(
            handle,
            { context in
                guard let context else { return 0 }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                for listener in database.transactionListeners {
                    do {
                        try listener.transactionWillCommit()
                    } catch {
                        database.refusedCommitError = error
                        return 1  // non-zero turns the COMMIT into a rollback
                    }
                }
                database.changeTracker?.transactionWillCommit()
                if !database.transactionListeners.isEmpty { database.pendingTransactionEnd = .commit }
                return 0
            }, context)
        sqlite3_rollback_hook(
            handle,
            { context in
                guard let context else { return }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                database.changeTracker?.transactionDidRollback()
                if !database.transactionListeners.isEmpty { database.pendingTransactionEnd = .rollback }
            }, context)
    }

    func uninstallHooks() {
        guard hooksInstalled else { return }
        hooksInstalled = false
        sqlite3_update_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
    }

    /// Tells the listeners about the transaction the last statement ended. Runs after the
    /// statement returned, when they may use the connection again.
    func deliverTransactionEnd() {
        guard let end = pendingTransactionEnd else { return }
        pendingTransactionEnd = nil
        let listeners = transactionListeners
        for listener in listeners {
            switch end {
            case .commit: listener.transactionDidCommit(self)
            case .rollback: listener.transactionDidRollback(self)
            }
        }
    }
}

/// How the last transaction ended, waiting to be told to the listeners.
enum TransactionEnd {
    case commit, rollback
}
