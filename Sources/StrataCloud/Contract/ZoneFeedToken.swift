/// What a zone change token says, for the clouds that issue them (`MockCloud` and the
/// PostgreSQL store): `z:position[:access[:horizon]]`.
///
/// - `position`: the last change the token's holder has.
/// - `access`: the participant access it was issued under; a newer access starts the zone over.
/// - `horizon`: the zone's purge point when the token was issued. Deletions before the purge
///   point are gone, so a token before it has expired, unless it was issued under the same
///   purge point: a device paging through a zone from scratch holds tokens before the purge
///   point, and needs none of the purged deletions (it reads the whole zone, and deletes what
///   the zone no longer has at the end). Without this, each of its pages expired and it started
///   over for ever.
package struct ZoneFeedToken: Equatable, Sendable {
    package var position: Int64
    package var access: Int64
    /// Nil for tokens issued before purge points were written into them.
    package var horizon: Int64?

    package init(position: Int64, access: Int64, horizon: Int64?) {
        self.position = position
        self.access = access
        self.horizon = horizon
    }

    /// The token's content; a nil token is the zone's start.
    ///
    /// - Throws: `CloudError.changeTokenExpired` for a token no cloud of this kind issued.
    package init(_ token: CloudChangeToken?) throws(CloudError) {
        guard let token else {
            self.init(position: 0, access: 0, horizon: nil)
            return
        }
        let parts = token.value.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...4).contains(parts.count), parts[0] == "z", let position = Int64(parts[1]), position >= 0,
            let access = parts.count >= 3 ? Int64(parts[2]) : 0, access >= 0
        else { throw .changeTokenExpired }
        var horizon: Int64?
        if parts.count == 4 {
            guard let value = Int64(parts[3]), value >= 0 else { throw .changeTokenExpired }
            horizon = value
        }
        self.init(position: position, access: access, horizon: horizon)
    }

    /// The token.
    package var token: CloudChangeToken {
        CloudChangeToken("z:\(position):\(access):\(horizon ?? 0)")
    }

    /// Whether the token is too old for a zone whose purge point is now `zoneHorizon`.
    package func hasExpired(zoneHorizon: Int64) -> Bool {
        position < zoneHorizon && horizon != zoneHorizon
    }
}
