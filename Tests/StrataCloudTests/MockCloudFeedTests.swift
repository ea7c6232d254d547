import Testing

@testable import StrataCloud

/// `MockCloudFeed` against a plain model, and MockCloud's paged feed against what a zone holds,
/// through the shapes that break an index: records changed again, deleted, re-created, pages of
/// one and of everything, compactions.
@Suite(.timeLimit(.minutes(1))) struct MockCloudFeedTests {
    @Test(arguments: [1, 2, 3, 4]) func countsMatchAPlainModel(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var feed = MockCloudFeed()
        var model: [(sequence: Int64, live: Bool)] = []
        var sequence: Int64 = 0
        for _ in 0..<2_000 {
            if model.isEmpty || Int.random(in: 0..<3, using: &random) > 0 {
                sequence += Int64.random(in: 1...3, using: &random)
                #expect(feed.append(sequence: sequence, name: "r\(sequence)") == model.count)
                model.append((sequence, true))
            } else {
                let position = Int.random(in: 0..<model.count, using: &random)
                feed.markStale(at: position)
                model[position].live = false
            }
            let probe = Int.random(in: 0...model.count, using: &random)
            #expect(feed.liveCount(from: probe) == model[probe...].filter(\.live).count)
            #expect(feed.liveCount == model.filter(\.live).count)
            let after = Int64.random(in: 0...(sequence + 1), using: &random)
            #expect(feed.firstPosition(after: after) == (model.firstIndex { $0.sequence > after } ?? model.count))
        }
    }

    /// Pages of every size over a zone edited at random (records saved again, deleted and
    /// saved anew): every page is in order, the pages together are what changed, and each
    /// page's estimate is exactly what is left.
    @Test(arguments: [1, 2, 7, 50, 400]) func pagesListEveryChangeOnceInOrder(pageSize: Int) async throws {
        var random = SplitMix(seed: UInt64(pageSize))
        let cloud = MockCloud()
        let database = cloud.container(user: "alice").privateDatabase
        let zone = CloudZoneID(name: "z", owner: "alice")
        try await database.saveZones([zone])
        var token: CloudChangeToken?
        var present: Set<String> = []
        var tags: [String: String] = [:]
        for round in 0..<6 {
            var saves: [CloudRecord] = []
            var deletes: [CloudRecordID] = []
            var touched: Set<String> = []
            for _ in 0..<Int.random(in: 1...120, using: &random) {
                let name = "r\(Int.random(in: 0..<150, using: &random))"
                guard touched.insert(name).inserted else { continue }
                let id = CloudRecordID(name: name, zone: zone)
                if present.contains(name) && Bool.random(using: &random) {
                    deletes.append(id)
                    present.remove(name)
                } else {
                    saves.append(
                        CloudRecord(id: id, type: "t", fields: ["round": .integer(Int64(round))], changeTag: tags[name]))
                    present.insert(name)
                }
            }
            let result = try await database.modifyRecords(saving: saves, deleting: deletes)
            for record in saves {
                let saved = try #require(try result.saveResults[record.id]?.get())
                tags[record.id.name] = saved.changeTag
            }
            for id in deletes {
                #expect(throws: Never.self) { try result.deleteResults[id]?.get() }
                tags[id.name] = nil
            }
            // A device that follows the zone from its last token, and one that starts over.
            var changed: [String: Int64] = [:]
            var deleted: Set<String> = []
            var pages = 0
            repeat {
                let page = try await database.fetchZoneChanges(zone, since: token, limit: pageSize)
                pages += 1
                #expect(page.changed.count + page.deleted.count <= pageSize)
                for record in page.changed {
                    changed[record.id.name] = record.fields["round"].flatMap { if case .integer(let v) = $0 { v } else { nil } }
                }
                for tombstone in page.deleted { deleted.insert(tombstone.id.name) }
                token = page.token
                if !page.moreComing { #expect(page.remainingEstimate == 0) }
                if pages > 10_000 { Issue.record("the feed never ended"); break }
                if !page.moreComing { break }
            } while true
            #expect(Set(changed.keys) == Set(saves.map(\.id.name)), "round \(round)")
            #expect(deleted == Set(deletes.map(\.name)), "round \(round)")
            #expect(changed.values.allSatisfy { $0 == Int64(round) })

            var fromScratch: Set<String> = []
            var scratchToken: CloudChangeToken?
            var estimates: [Int] = []
            var counts: [Int] = []
            repeat {
                let page = try await database.fetchZoneChanges(zone, since: scratchToken, limit: pageSize)
                let names = page.changed.map(\.id.name)
                #expect(fromScratch.isDisjoint(with: names), "a record listed twice")
                fromScratch.formUnion(names)
                counts.append(page.changed.count + page.deleted.count)
                estimates.append(page.remainingEstimate ?? -1)
                scratchToken = page.token
                if !page.moreComing { break }
            } while counts.count < 10_000
            #expect(fromScratch == present, "round \(round)")
            // Each estimate is exactly what the later pages listed.
            for index in estimates.indices {
                #expect(estimates[index] == counts[(index + 1)...].reduce(0, +))
            }
        }
    }
}
