import Hummingbird
import StrataCloud
import StrataCloudWire

extension CloudService {
    /// The work of one database operation on the backend's database, once its body was read,
    /// decoded and every field validated: reading the body happens before the request deadline
    /// starts, so abandoned work never holds the request body.
    typealias DatabaseWork = @Sendable (any CloudDatabase) async throws -> Response

    /// Reads, decodes and validates one database operation's body; returns the call to the
    /// backend and the encoding of its answer.
    func prepare(_ operation: CloudOperation, request: Request) async throws -> DatabaseWork {
        let validator = RequestValidator(configuration: configuration)
        switch operation {
        case .saveZones:
            let body = try await decode(ZonesRequest.self, from: request)
            try validator.validate(body)
            return { database in
                try await database.saveZones(body.zones)
                return try CloudResponses.json(EmptyResponse())
            }
        case .deleteZones:
            let body = try await decode(ZonesRequest.self, from: request)
            try validator.validate(body)
            return { database in
                try await database.deleteZones(body.zones)
                return try CloudResponses.json(EmptyResponse())
            }
        case .fetchRecords:
            let body = try await decode(FetchRecordsRequest.self, from: request)
            try configuration.limits.checkFetch(count: body.ids.count)
            try validator.validate(body)
            return { database in
                return try CloudResponses.json(FetchRecordsResponse(try await database.fetchRecords(body.ids)))
            }
        case .modifyRecords:
            let body = try await decode(ModifyRecordsRequest.self, from: request)
            try checkLimits(items: body.itemCount, saving: body.saving)
            try validator.validate(body)
            return { database in
                let result = try await database.modifyRecords(saving: body.saving, deleting: body.deleting)
                return try CloudResponses.json(ModifyRecordsResponse(result, answer: body.answer ?? .records))
            }
        case .fetchDatabaseChanges:
            let body = try await decode(FetchDatabaseChangesRequest.self, from: request)
            try validator.validate(body)
            return { database in
                let pages = (body.firstPages ?? []).map { page in
                    CloudZonePageRequest(
                        zone: page.zone, since: page.since, limit: validator.pageLimit(page.limit), plannedPages: page.boundedPlannedPages)
                }
                let changes = try await database.fetchDatabaseChanges(since: body.since, firstPages: pages)
                return try CloudResponses.json(DatabaseChangesResponse(changes))
            }
        case .fetchZoneChanges:
            let body = try await decode(FetchZoneChangesRequest.self, from: request)
            try validator.validate(body)
            return { database in
                let (limit, planned) = (validator.pageLimit(body.limit), body.boundedPlannedPages)
                // A store keeping records as JSON writes the page's records into the response
                // as they are, rather than reading them into values to write them out again.
                if let source = database as? any EncodedZonePageSource {
                    return CloudResponses.json(
                        bytes: ZoneChangesResponse.body(
                            try await source.fetchEncodedZoneChanges(body.zone, since: body.since, limit: limit, plannedPages: planned)))
                }
                let arriving = try await database.fetchArrivingZoneChanges(
                    body.zone, since: body.since, limit: limit, plannedPages: planned)
                var changes = try await arriving.changes()
                changes.followingTokens = arriving.followingTokens
                return try CloudResponses.json(ZoneChangesResponse(changes))
            }
        case .missingAssets:
            let body = try await decode(MissingAssetsRequest.self, from: request)
            try validator.validate(body)
            return { database in
                return try CloudResponses.json(MissingAssetsResponse(missing: try await database.missingAssets(body.hashes)))
            }
        case .uploadAssets:
            let body = try await decode(UploadAssetsRequest.self, from: request)
            try validator.validate(body)
            return { database in
                try await database.uploadAssets(body.assets)
                return try CloudResponses.json(EmptyResponse())
            }
        case .fetchAsset:
            let body = try await decode(FetchAssetRequest.self, from: request)
            try validator.validate(body)
            return { database in
                return try CloudResponses.json(try await database.fetchAsset(body.hash))
            }
        case .saveShare:
            let body = try await decode(SaveShareRequest.self, from: request)
            try validator.validate(body)
            return { database in
                return try CloudResponses.json(try await database.saveShare(body.share))
            }
        case .fetchShare:
            let body = try await decode(ShareRootRequest.self, from: request)
            try validator.validate(body)
            return { database in
                return try CloudResponses.json(try await database.fetchShare(rootRecordID: body.rootRecordID))
            }
        case .deleteShare:
            let body = try await decode(ShareRootRequest.self, from: request)
            try validator.validate(body)
            return { database in
                try await database.deleteShare(rootRecordID: body.rootRecordID)
                return try CloudResponses.json(EmptyResponse())
            }
        }
    }
}
