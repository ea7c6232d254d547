/// Migration 9: accepting and leaving a share lock the zone's row before they rely on the
/// share, in the order every other request takes them (`ZoneLockOrder`).
///
/// Migration 2's `accept_share` locked the share first and the zone when it moved the zone's
/// position. The owner saving or deleting that share, deleting its root record or deleting
/// the zone locks the zone first and the share next: the two deadlocked, and PostgreSQL failed
/// one of them after `deadlock_timeout`. Its `leave_share` read the share and its participant
/// before it took the zone: a leave queued behind the owner ending the share then recorded the
/// participant's departures a second time and failed at the end (the participant was on no
/// share of the zone any more, so hinting the change was refused). Otherwise the same.
enum CloudStoreLockOrderSchema {
    static let statements: [String] = [acceptShare, leaveShare]

    /// `leave_share(owner, zone, root)`: the request user leaves a share they are on, for
    /// themselves only; the shared records depart from their feed, and their devices hear it.
    /// False when they are not on it; true when they left, or when the share is gone already
    /// (ended by its owner, perhaps while this waited for the zone), which changes nothing.
    /// Migration 2 creates it too, so a new database has this version from the start.
    ///
    /// A user on no share of the zone returns before taking any lock: a stranger cannot hold
    /// another user's zone. What is read before the zone's lock is read again under it.
    static let leaveShare = """
        CREATE OR REPLACE FUNCTION strata_cloud.leave_share(p_owner text, p_zone text, p_root text) RETURNS boolean
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
        DECLARE
            me text := current_setting('strata.user', true);
            v_position bigint;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM strata_cloud.shares s WHERE s.owner = p_owner AND s.zone = p_zone AND s.root = p_root) THEN
                RETURN true;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM strata_cloud.share_participants p
                    WHERE p.owner = p_owner AND p.zone = p_zone AND p.root = p_root AND p.participant = me AND me <> p_owner) THEN
                RETURN false;
            END IF;
            SELECT z.sequence INTO v_position FROM strata_cloud.zones z WHERE z.owner = p_owner AND z.name = p_zone FOR UPDATE;
            IF NOT EXISTS (SELECT 1 FROM strata_cloud.share_participants p
                    WHERE p.owner = p_owner AND p.zone = p_zone AND p.root = p_root AND p.participant = me) THEN
                RETURN true;
            END IF;
            UPDATE strata_cloud.share_participants SET acceptance = 'removed'
            WHERE owner = p_owner AND zone = p_zone AND root = p_root AND participant = me;
            v_position := strata_cloud.record_departures(p_owner, p_zone, p_root, ARRAY[me], v_position);
            UPDATE strata_cloud.shares SET change_tag = 't' || v_position WHERE owner = p_owner AND zone = p_zone AND root = p_root;
            UPDATE strata_cloud.zones SET sequence = v_position WHERE owner = p_owner AND name = p_zone;
            PERFORM strata_cloud.notify_zone_change(p_owner, p_zone, ARRAY[me]);
            RETURN true;
        END
        $$
        """

    /// `accept_share(owner, zone, root)`: accepts a share for the request user, an invited
    /// participant or anyone when the share is public; the zone's next position, or NULL when
    /// the user may not join. Migration 2 creates it too, so a new database has this version
    /// from the start.
    ///
    /// A URL naming no share returns before taking any lock: a stranger cannot hold another
    /// user's zone. The share is read again, and locked, under the zone's lock.
    static let acceptShare = """
        CREATE OR REPLACE FUNCTION strata_cloud.accept_share(p_owner text, p_zone text, p_root text) RETURNS bigint
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
        DECLARE
            me text := current_setting('strata.user', true);
            public_access text;
            v_position bigint;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM strata_cloud.shares s WHERE s.owner = p_owner AND s.zone = p_zone AND s.root = p_root) THEN
                RETURN NULL;
            END IF;
            PERFORM 1 FROM strata_cloud.zones z WHERE z.owner = p_owner AND z.name = p_zone FOR UPDATE;
            SELECT s.public_permission INTO public_access FROM strata_cloud.shares s
            WHERE s.owner = p_owner AND s.zone = p_zone AND s.root = p_root FOR UPDATE;
            IF NOT FOUND OR me IS NULL OR me = '' OR me = p_owner THEN RETURN NULL; END IF;
            IF NOT EXISTS (SELECT 1 FROM strata_cloud.share_participants p
                    WHERE p.owner = p_owner AND p.zone = p_zone AND p.root = p_root AND p.participant = me)
                AND public_access = 'none' THEN
                RETURN NULL;
            END IF;
            INSERT INTO strata_cloud.users (name) VALUES (me) ON CONFLICT (name) DO NOTHING;
            UPDATE strata_cloud.zones SET sequence = sequence + 1 WHERE owner = p_owner AND name = p_zone
                RETURNING sequence INTO v_position;
            INSERT INTO strata_cloud.share_participants AS p
                (owner, zone, root, participant, role, permission, acceptance, access_changed, position)
            VALUES (p_owner, p_zone, p_root, me, 'publicUser', public_access, 'accepted', v_position,
                (SELECT coalesce(max(q.position), 0) + 1 FROM strata_cloud.share_participants q
                 WHERE q.owner = p_owner AND q.zone = p_zone AND q.root = p_root))
            ON CONFLICT (owner, zone, root, participant) DO UPDATE SET acceptance = 'accepted', access_changed = v_position;
            UPDATE strata_cloud.shares SET change_tag = 't' || v_position WHERE owner = p_owner AND zone = p_zone AND root = p_root;
            RETURN v_position;
        END
        $$
        """
}
