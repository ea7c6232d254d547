import Strata

/// Scorekeeper's migrations.
public enum Schema {
    /// The migrator that creates Scorekeeper's tables, the asset store's included.
    ///
    /// `eraseDatabaseOnSchemaChange` is on in preview and test databases only: they are
    /// rebuilt from seeds anyway, while a live file holds the user's data.
    public static func migrator(erasingOnSchemaChange: Bool) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.eraseDatabaseOnSchemaChange = erasingOnSchemaChange
        AssetSchema.registerMigration(in: &migrator)
        migrator.registerMigration("v1: games and players") { db in
            try db.execute(
                sql: """
                    CREATE TABLE games (
                        id TEXT PRIMARY KEY NOT NULL,
                        title TEXT NOT NULL CHECK (title <> ''),
                        createdAt TEXT NOT NULL
                    );
                    -- Titles name games on the command line, so two games cannot share one.
                    CREATE UNIQUE INDEX games_title ON games (title COLLATE NOCASE);
                    CREATE TABLE players (
                        id TEXT PRIMARY KEY NOT NULL,
                        gameID TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
                        name TEXT NOT NULL CHECK (name <> ''),
                        score INTEGER NOT NULL DEFAULT 0,
                        avatar TEXT,
                        createdAt TEXT NOT NULL
                    );
                    CREATE UNIQUE INDEX players_game_name ON players (gameID, name COLLATE NOCASE);
                    """)
            try db.trackAssetColumn(table: Player.tableName, column: "avatar")
        }
        // Sync refuses UNIQUE indexes other than the primary key: two devices could each
        // insert a row the other would then reject. Scorekeeper checks titles and names before
        // it writes (Scorekeeper.addGame and friends); the indexes stay, for lookups.
        migrator.registerMigration("v2: ready for sync") { db in
            try db.execute(
                sql: """
                    DROP INDEX games_title;
                    CREATE INDEX games_title ON games (title COLLATE NOCASE);
                    DROP INDEX players_game_name;
                    CREATE INDEX players_game_name ON players (gameID, name COLLATE NOCASE);
                    """)
        }
        return migrator
    }
}
