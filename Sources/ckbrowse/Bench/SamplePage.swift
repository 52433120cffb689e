import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A deterministic records/changes page with mixed field types, about 650–700 bytes a record on the wire.
enum SamplePage {
    static func make(records count: Int) -> RecordChangesPage {
        var generator = SplitMix64(seed: 42)
        var results: [RecordResult] = []
        results.reserveCapacity(count)
        let owner = "_4ab84f2560e93224e4c1b40e97b24ae5"
        let titles = ["Groceries", "Sunset over Kyoto 京都", "Meeting notes", "Café au lait ☕️", "Draft: roadmap", "Mei Chen"]
        for i in 0..<count {
            if i % 25 == 24 {
                results.append(.deleted(recordName: String(cFormat: "REC-%06d", i), zoneID: nil))
                continue
            }
            let created = 1_709_290_000_000 + Int64(i) * 61_000
            var record = Record(
                recordName: String(cFormat: "REC-%06d-%08X", i, UInt32(truncatingIfNeeded: generator.next())),
                recordType: i % 3 == 0 ? "Artwork" : "Note",
                recordChangeTag: String(generator.next() % 2_000_000_000, radix: 36))
            record.fields = [
                "title": .string(titles[i % titles.count] + " #\(i)"),
                "pinned": .int64(Int64(i % 2)),
                "rating": .double(Double(generator.next() % 1000) / 100),
                "dueAt": .timestamp(created + 86_400_000),
                "tags": .stringList(["home", "t\(i % 7)"]),
                "folder": .reference(Reference(recordName: "folder-\(i % 10)", action: .deleteSelf)),
                "place": .location(Location(latitude: 35.0116 + Double(i) / 1000, longitude: 135.7681)),
            ]
            record.created = RecordStamp(timestamp: created, userRecordName: owner, deviceID: "2")
            record.modified = RecordStamp(timestamp: created + 5_000, userRecordName: owner, deviceID: "2")
            record.deleted = false
            results.append(.record(record))
        }
        return RecordChangesPage(records: results, syncToken: "HwoECJGaGRgAGiAQ0ieBHRZ7R0aV", moreComing: true)
    }
}
