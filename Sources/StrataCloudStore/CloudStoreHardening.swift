/// Migration 5: the request role may do exactly what the API needs, and no more.
///
/// - `notify_zone_change` runs as the schema's owner, so it checks its caller: the zone's owner,
///   or a user on one of its shares (who accepted, or just left). Only the owner may name other
///   users to hint (participants it just removed); anyone else may name only themselves.
/// - A participant who may write a shared zone must lock its row and move its position forward,
///   and nothing else: a trigger refuses any other change a non-owner makes to a zone row
///   (`deleted`, `horizon`, the database feed position, the key), and any move backwards.
/// - Privileges the API never uses are revoked: deleting users, zones, assets and chunks, and
///   updating users (their counters move only through `SECURITY DEFINER` functions that check
///   the caller), assets and chunks.
enum CloudStoreHardening {
    static let role = CloudStoreMigrations.requestRole

    static let statements: [String] = [
        """
        CREATE OR REPLACE FUNCTION strata_cloud.notify_zone_change(p_owner text, p_zone text, p_extra text[]) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
        DECLARE
            me text := current_setting('strata.user', true);
            payload text;
        BEGIN
            IF me IS NULL OR me = '' OR (me <> p_owner AND NOT EXISTS (
                SELECT 1 FROM strata_cloud.share_participants p
                WHERE p.owner = p_owner AND p.zone = p_zone AND p.participant = me))
            THEN
                RAISE EXCEPTION 'strata: % may not announce changes to zones of %', me, p_owner USING ERRCODE = '42501';
            END IF;
            IF me <> p_owner AND EXISTS (SELECT 1 FROM unnest(p_extra) AS e(u) WHERE e.u IS DISTINCT FROM me) THEN
                RAISE EXCEPTION 'strata: only the owner of a zone may hint other users' USING ERRCODE = '42501';
            END IF;
            SELECT json_agg(DISTINCT u)::text INTO payload FROM (
                SELECT p_owner AS u
                UNION SELECT p.participant FROM strata_cloud.share_participants p WHERE p.owner = p_owner AND p.zone = p_zone
                UNION SELECT unnest(p_extra)) AS users;
            IF octet_length(payload) > 7000 THEN payload := '*'; END IF;
            PERFORM pg_notify('strata_cloud', payload);
        END
        $$
        """,
        "REVOKE ALL ON FUNCTION strata_cloud.notify_zone_change(text, text, text[]) FROM PUBLIC",
        "GRANT EXECUTE ON FUNCTION strata_cloud.notify_zone_change(text, text, text[]) TO \(role)",
        """
        CREATE FUNCTION strata_cloud.guard_zone_update() RETURNS trigger
        LANGUAGE plpgsql SET search_path = '' AS $$
        BEGIN
            IF current_user = '\(role)' AND OLD.owner IS DISTINCT FROM current_setting('strata.user', true) AND (
                NEW.owner IS DISTINCT FROM OLD.owner OR NEW.name IS DISTINCT FROM OLD.name
                OR NEW.deleted IS DISTINCT FROM OLD.deleted OR NEW.horizon IS DISTINCT FROM OLD.horizon
                OR NEW.database_change IS DISTINCT FROM OLD.database_change OR NEW.sequence < OLD.sequence)
            THEN
                RAISE EXCEPTION 'strata: a participant may only move a shared zone''s position forward' USING ERRCODE = '42501';
            END IF;
            RETURN NEW;
        END
        $$
        """,
        """
        CREATE TRIGGER zones_participant_guard BEFORE UPDATE ON strata_cloud.zones
        FOR EACH ROW EXECUTE FUNCTION strata_cloud.guard_zone_update()
        """,
        "REVOKE ALL ON FUNCTION strata_cloud.guard_zone_update() FROM PUBLIC, \(role)",
        "REVOKE UPDATE, DELETE ON strata_cloud.users FROM \(role)",
        "REVOKE DELETE ON strata_cloud.zones FROM \(role)",
        "REVOKE UPDATE, DELETE ON strata_cloud.assets, strata_cloud.asset_chunks FROM \(role)",
        "REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA strata_cloud FROM \(role), PUBLIC",
    ]
}
