/// Who may write what in a shared zone: one implementation of the sharing rules for every
/// cloud (MockCloud, the PostgreSQL store), as ``CloudModifyRules`` is for change tags and
/// references. Each cloud reads its own state and answers the questions through closures;
/// the rules themselves hold no state and do no I/O. Where PostgreSQL must enforce a rule
/// for security too (row-level security, `writable_shares()`), this is the specification
/// and the conformance suite (CloudSharingTests, run against every cloud) proves both agree.
package enum CloudSharingRules {
    /// The shared root `name` is under: the first record on its parent chain, itself
    /// included, that is the root of a share. `parentOf` gives a record's parent (as stored,
    /// or as a request would leave it); a parent in another zone ends the chain, and so does
    /// a cycle.
    package static func sharedRoot(
        of name: String, in zone: CloudZoneID, isSharedRoot: (String) -> Bool, parentOf: (String) -> CloudRecordID?
    ) -> String? {
        var current = name
        var seen = ExactNames()
        while seen.insert(current) {
            if isSharedRoot(current) { return current }
            guard let parent = parentOf(current), parent.zone == zone else { return nil }
            current = parent.name
        }
        return nil
    }

    /// What a participant's request may not do, record by record:
    /// - a save must leave its record under a share the participant may write
    ///   (`rootAfter`, with the request's own saves applied), and a record that exists must
    ///   already be under one (`rootBefore`): no moving records into or out of a share;
    /// - a delete must concern an existing record under a share the participant may write,
    ///   and never a shared root itself (a participant leaves with `deleteShare`).
    package static func participantFailures(
        saving saves: [CloudRecord], deleting deletes: [CloudRecordID],
        exists: (String) -> Bool, isSharedRoot: (String) -> Bool,
        rootBefore: (String) -> String?, rootAfter: (String) -> String?, canWrite: (String) -> Bool
    ) -> [CloudRecordID: CloudError] {
        func writable(_ root: String?) -> Bool { root.map { canWrite($0) } ?? false }
        var failures: [CloudRecordID: CloudError] = [:]
        for record in saves {
            let name = record.id.name
            if !writable(rootAfter(name)) || (exists(name) && !writable(rootBefore(name))) {
                failures[record.id] = .permissionFailure(record.id)
            }
        }
        for id in deletes where isSharedRoot(id.name) || !exists(id.name) || !writable(rootBefore(id.name)) {
            failures[id] = .permissionFailure(id)
        }
        return failures
    }

    /// The participants of a share as the owner saves it: the owner first, as owner with
    /// read-write access; everyone else as the owner lists them, never as a second owner,
    /// keeping the acceptance the cloud knows (`knownAcceptance`); a new participant, or one
    /// who had been removed and is invited again, is pending until they accept. Names and
    /// email addresses are dropped: clouds fill them in from profiles.
    package static func savedParticipants(
        of share: CloudShare, owner: String, knownAcceptance: (String) -> CloudShare.Acceptance?
    ) -> [CloudShare.Participant] {
        [CloudShare.Participant(user: owner, role: .owner, permission: .readWrite, acceptance: .accepted)]
            + share.participants.filter { $0.user != owner }.map { participant in
                var participant = participant
                participant.role = participant.role == .owner ? .privateUser : participant.role
                participant.acceptance = knownAcceptance(participant.user) ?? .pending
                if participant.acceptance == .removed { participant.acceptance = .pending }
                // Names come from profiles as the cloud answers, never from what the owner sent.
                participant.displayName = nil
                participant.email = nil
                return participant
            }
    }

    /// The users whose profiles `user` may read among `shares`: themselves, the owner of each
    /// share they own, are invited to or joined (the owner chose them), and the participants
    /// who accepted such a share. An invitation alone reveals nothing of the invitee: anyone
    /// can put any user id into a share.
    package static func profilePeers(of user: String, in shares: some Sequence<CloudShare>) -> Set<String> {
        var peers: Set<String> = [user]
        for share in shares {
            let isOn = share.owner == user || share.participant(user).map { $0.acceptance != .removed } == true
            guard isOn else { continue }
            peers.insert(share.owner)
            for participant in share.participants where participant.acceptance == .accepted { peers.insert(participant.user) }
        }
        return peers
    }
}
