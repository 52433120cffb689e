import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RecordBrowser

extension EffectRunner {
    /// Queries one `countReferrersOnServer` may send in all (a query per record and field).
    static let referrerQueryBudget = 2_000

    /// Which records refer to each of `keys`, as the server answers records/query on each QUERYABLE
    /// reference field (`field EQUALS <reference>`, `LIST_CONTAINS` for a list), every page followed;
    /// the DELETE_SELF cascade followed level by level, each record once, at most `limit` records.
    func countReferrersOnServer(_ keys: [RecordKey], fields: [ReferenceField], limit: Int = 10_000) async -> [RecordKey: ServerReferrers] {
        var budget = Self.referrerQueryBudget
        var counted: [RecordKey: ServerReferrers] = [:]
        for key in keys { counted[key] = await serverReferrers(of: key, fields: fields, budget: &budget, limit: limit) }
        return counted
    }

    func serverReferrers(of key: RecordKey, fields: [ReferenceField], budget: inout Int, limit: Int) async -> ServerReferrers {
        let database = client.database(key.zone.database)
        var referrers: [Referrer] = []
        var seen: Set<String> = [key.recordName]
        var level = [key.recordName]
        while !level.isEmpty {
            var next: [String] = []
            for target in level {
                for field in fields {
                    guard budget > 0 else { return ServerReferrers(referrers: referrers, truncatedAt: seen.count) }
                    budget -= 1
                    let value = FieldValue.reference(Reference(recordName: target, action: nil))
                    let filter = Filter(field.field, field.isList ? .listContains : .equals, value)
                    let request = QueryRequest(query: Query(recordType: field.recordType, filterBy: [filter]), zoneID: key.zone.zoneID, desiredKeys: [field.field])
                    do {
                        for try await page in database.queryPages(request) {
                            for record in page.records.compactMap(\.record) {
                                let references: [Reference]
                                switch record.fields[field.field] {
                                case .reference(let r)?: references = [r]
                                case .referenceList(let rs)?: references = rs
                                default: continue
                                }
                                for r in references where r.recordName == target && (r.zoneID == nil || r.zoneID?.zoneName == key.zone.zoneName) {
                                    let referrer = Referrer(key: RecordKey(zone: key.zone, recordName: record.recordName), recordType: record.recordType,
                                                            field: field.field, action: r.action, target: target)
                                    referrers.append(referrer)
                                    guard r.action == .deleteSelf, seen.insert(record.recordName).inserted else { continue }
                                    if seen.count > limit { return ServerReferrers(referrers: referrers, truncatedAt: limit) }
                                    next.append(record.recordName)
                                }
                            }
                        }
                    } catch {
                        return ServerReferrers(referrers: referrers, failure: "\(field.label): \(BrowserFailure(error).message)")
                    }
                }
            }
            level = next
        }
        return ServerReferrers(referrers: referrers)
    }
}
