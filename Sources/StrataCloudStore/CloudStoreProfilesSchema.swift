/// Migration 8: users' profiles (a display name and an optional email address), which name the
/// participants of the shares the store returns.
///
/// - `user_profiles` holds one row per user who set a profile. Row-level security lets a user
///   insert or update only their own row (the request role holds no `DELETE`), and read their
///   own and those of the peers who agreed to share with them: the owner of a share they are
///   invited to or joined (the owner chose them), and the participants who accepted a share
///   they own or are on. Inviting someone does not reveal their name or email: anyone can
///   type any user id into a share, so a profile shows only once its user accepted.
/// - `profile_peers()` lists those peers. It reads `share_participants` as the schema's owner
///   (`SECURITY DEFINER`, empty search path), as the sharing policies' functions do: a
///   participant's own policies show them only the shares they accepted, and an invitee must
///   also see who invited them. The policy calls it once per query in an uncorrelated
///   sub-select.
/// - The checks repeat the contract's bounds (`CloudUserProfile.validated()`), so no other
///   writer can store what a cloud would refuse.
enum CloudStoreProfilesSchema {
    static let me = CloudStoreMigrations.isRequestUser
    static let role = CloudStoreMigrations.requestRole

    static let statements: [String] = [
        """
        CREATE TABLE strata_cloud.user_profiles (
            owner text PRIMARY KEY,
            display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 256),
            email text CHECK (email IS NULL OR char_length(email) <= 320),
            updated_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE FUNCTION strata_cloud.profile_peers() RETURNS SETOF text
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
            SELECT p.owner FROM strata_cloud.share_participants p
            WHERE p.participant = current_setting('strata.user', true) AND p.acceptance <> 'removed'
            UNION
            SELECT p.participant FROM strata_cloud.share_participants p
            WHERE p.owner = current_setting('strata.user', true) AND p.acceptance = 'accepted'
            UNION
            SELECT q.participant FROM strata_cloud.share_participants p
            JOIN strata_cloud.share_participants q ON q.owner = p.owner AND q.zone = p.zone AND q.root = p.root
            WHERE p.participant = current_setting('strata.user', true) AND p.acceptance <> 'removed' AND q.acceptance = 'accepted'
        $$
        """,
        "REVOKE ALL ON FUNCTION strata_cloud.profile_peers() FROM PUBLIC",
        "GRANT EXECUTE ON FUNCTION strata_cloud.profile_peers() TO \(role)",
        "ALTER TABLE strata_cloud.user_profiles ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY owner_reads ON strata_cloud.user_profiles FOR SELECT USING (owner = \(me))",
        """
        CREATE POLICY peer_reads ON strata_cloud.user_profiles FOR SELECT
            USING (owner IN (SELECT strata_cloud.profile_peers()))
        """,
        "CREATE POLICY owner_inserts ON strata_cloud.user_profiles FOR INSERT WITH CHECK (owner = \(me))",
        "CREATE POLICY owner_updates ON strata_cloud.user_profiles FOR UPDATE USING (owner = \(me)) WITH CHECK (owner = \(me))",
        "GRANT SELECT, INSERT, UPDATE ON strata_cloud.user_profiles TO \(role)",
    ]
}
