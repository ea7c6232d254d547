/// Migration 7, for end-to-end encryption: users' public keys, and the keys a share's owner
/// sealed for its participants.
///
/// - `public_keys` holds one Curve25519 public key (32 bytes) per user. Row-level security
///   lets every request read every key, and a user insert or update only their own row;
///   the request role holds no `DELETE`.
/// - `shares.wrapped_keys` holds a share's `wrappedKeys` as the JSON of the dictionary (names
///   to base64), in `bytea` so that any name travels exactly (PostgreSQL text and `jsonb`
///   cannot hold NUL); NULL when the share has none.
enum CloudStoreKeysSchema {
    static let me = CloudStoreMigrations.isRequestUser
    static let role = CloudStoreMigrations.requestRole

    static let statements: [String] = [
        """
        CREATE TABLE strata_cloud.public_keys (
            owner text PRIMARY KEY,
            key bytea NOT NULL CHECK (octet_length(key) = 32),
            updated_at timestamptz NOT NULL DEFAULT now())
        """,
        "ALTER TABLE strata_cloud.public_keys ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY everyone_reads ON strata_cloud.public_keys FOR SELECT USING (true)",
        "CREATE POLICY owner_inserts ON strata_cloud.public_keys FOR INSERT WITH CHECK (owner = \(me))",
        "CREATE POLICY owner_updates ON strata_cloud.public_keys FOR UPDATE USING (owner = \(me)) WITH CHECK (owner = \(me))",
        "GRANT SELECT, INSERT, UPDATE ON strata_cloud.public_keys TO \(role)",
        "ALTER TABLE strata_cloud.shares ADD COLUMN wrapped_keys bytea",
    ]
}
