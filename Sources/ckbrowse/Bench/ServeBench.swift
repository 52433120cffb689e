import ArgumentParser
import CloudKitLocal
import CloudKitWeb
import ServiceLifecycle
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

/// Figures for the local server over loopback: change pages served per second, and one 200-operation
/// atomic records/modify against the same 200 operations sent one request each.
struct ServeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Local server over loopback: change and query pages per second; 200-op atomic modify vs 200 single requests; index rules and shared zones against their baselines."
    )

    /// Serves `service` on a loopback port; answers the port and the serving task (cancel it to stop).
    /// Quiet: cancelling the task stops the server at once, which Hummingbird would report as an error
    /// per open connection in the figures' output. (A graceful shutdown was tried instead: in the one
    /// `bench-all` run with it, the batch after the million-record rows took 66.9 ms, not ~16; most
    /// likely the earlier servers, stopping only once the client's idle connections closed, released
    /// their stores, and SQLite checkpointed a million records' log, while the later figures ran.)
    static func serve(_ service: LocalCloudKit) async -> (Int, Task<Void, any Error>) {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = LocalHTTPServer(service: service, port: 0).application(quiet: true) { continuation.yield($0) }
        let task = Task { try await app.run() }
        var port = 0
        for await p in stream {
            port = p
            break
        }
        return (port, task)
    }

    static func client(port: Int, webAuthToken: String) -> CloudKitClient {
        CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://127.0.0.1:\(port)", container: "iCloud.bench", retryPolicy: .none),
            credentials: .apiToken("bench", webAuthToken: webAuthToken), transport: AsyncHTTPTransport())
    }

    @Option(help: "Records in the zone that is paged through.") var records = 10_000
    @Option(help: "Repetitions per figure (the median is printed).") var runs = 5
    @Option(help: "Concurrent clients for the aggregate paging figure.") var clients = 4
    @Option(help: "Records per zone for the query-scaling table (comma-separated; the first is the base of the ratios; 0 or empty skips it).")
    var scaling = "2000,100000"
    @Flag(help: "Print only the query-scaling table.") var scalingOnly = false

    func run() async throws {
        // The servers below are tuned as `serve` tunes its own (glibc's malloc keeps freed memory).
        Serve.keepFreedMemory()
        let sizes = scaling.split(separator: ",").compactMap { Int($0.trimmingWhitespace()) }.filter { $0 > 0 }
        if !sizes.isEmpty { try await QueryScaling(sizes: sizes, runs: runs).run() }
        if scalingOnly { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckbrowse-bench-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = ["bench"]
        configuration.users = [(name: "bench", token: "bench-user"), (name: "guest", token: "bench-guest")]
        configuration.userContacts = ["guest": UserContact(email: "guest@bench.invalid")]
        // Every run pages the same feed again: with the answer cache, runs after the first would be
        // answered from memory. These figures are about computing pages (scripts/bench-nginx.sh
        // measures the cache).
        configuration.answerCacheBytes = 0
        let service = try LocalCloudKit(store: try Store(directory: directory), configuration: configuration)
        let (port, serverTask) = await Self.serve(service)
        defer { serverTask.cancel() }
        let client = Self.client(port: port, webAuthToken: "bench-user")
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Bench"))])
        let zone = ZoneID(zoneName: "Bench")
        let sample = SamplePage.make(records: 200).records.compactMap(\.record)
        print("filling a zone with \(records) records…")
        for start in stride(from: 0, to: records, by: 200) {
            let ops = (start..<min(start + 200, records)).map { i -> RecordOperation in
                var record = sample[i % sample.count]
                record.recordName = String(cFormat: "R%07d", i)
                record.recordChangeTag = nil
                record.created = nil
                record.modified = nil
                record.deleted = nil
                return .create(record)
            }
            _ = try await db.modifyRecords(ModifyRecordsRequest(operations: ops, zoneID: zone))
        }

        // 1. Paging the whole feed, 200 records a page, one client.
        let pageTimes = try await medianSeconds(runs) {
            for try await _ in db.recordChangePages(zoneID: zone, resultsLimit: 200) {}
        }
        let pages = Double((records + 199) / 200)
        print(String(cFormat: "records/changes, 1 client:  %8.1f pages/s  %10.0f records/s  (%d pages in %.3f s, median of %d)", pages / pageTimes, Double(records) / pageTimes, Int(pages), pageTimes, runs))
        // 2. The same with several clients at once.
        let concurrentTime = try await medianSeconds(runs) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<clients {
                    group.addTask { for try await _ in db.recordChangePages(zoneID: zone, resultsLimit: 200) {} }
                }
                try await group.waitForAll()
            }
        }
        print(String(cFormat: "records/changes, %d clients: %8.1f pages/s  %10.0f records/s  (aggregate)", clients, pages * Double(clients) / concurrentTime, Double(records * clients) / concurrentTime))

        // 3. One atomic 200-operation modify against 200 single-operation requests.
        var current = try await db.lookupRecords((0..<200).map { String(cFormat: "R%07d", $0) }, zoneID: zone).compactMap(\.record)
        var round: Int64 = 0
        let batchTime = try await medianSeconds(runs) {
            round += 1
            let ops = current.map { RecordOperation.update(Record(recordName: $0.recordName, recordChangeTag: $0.recordChangeTag, fields: ["views": .int64(round)])) }
            let result = try await db.modifyRecords(ModifyRecordsRequest(operations: ops, zoneID: zone, atomic: true))
            guard result.isCompleteSuccess else { throw ValidationError("batch failed") }
            current = result.results.compactMap(\.record)
        }
        let singleTime = try await medianSeconds(runs) {
            round += 1
            var next: [Record] = []
            for record in current {
                let op = RecordOperation.update(Record(recordName: record.recordName, recordChangeTag: record.recordChangeTag, fields: ["views": .int64(round)]))
                let result = try await db.modifyRecords(ModifyRecordsRequest(operations: [op], zoneID: zone, atomic: true))
                guard let saved = result.results.first?.record else { throw ValidationError("single update failed") }
                next.append(saved)
            }
            current = next
        }
        print(String(cFormat: "records/modify: one 200-op atomic request %.1f ms; 200 single requests %.1f ms; ratio %.1fx", batchTime * 1000, singleTime * 1000, singleTime / batchTime))

        // 4. records/query pages (200 records, by an indexed field), with the schema's index rules
        //    and, from a second server on the same data, without them (`serve --no-index-rules`).
        var unchecked = configuration
        unchecked.enforcesIndexes = false
        let uncheckedService = try LocalCloudKit(store: try Store(directory: directory), configuration: unchecked)
        let (port2, serverTask2) = await Self.serve(uncheckedService)
        defer { serverTask2.cancel() }
        let uncheckedDB = Self.client(port: port2, webAuthToken: "bench-user").database(.private)
        let query = QueryRequest(
            query: Query(recordType: sample[0].recordType ?? "Artwork", filterBy: [], sortBy: [SortDescriptor(system: .createdTimestamp)]), zoneID: zone, resultsLimit: 200)
        try await service.addSystemIndexes(container: "iCloud.bench", environment: .development)
        func queryAll(_ db: CloudKitDatabase) async throws -> Int {
            var count = 0
            for try await page in db.queryPages(query) { count += page.records.count }
            return count
        }
        let queried = try await queryAll(db)
        let checkedTime = try await medianSeconds(runs) { _ = try await queryAll(db) }
        let uncheckedTime = try await medianSeconds(runs) { _ = try await queryAll(uncheckedDB) }
        let queryPages = Double((queried + 199) / 200)
        print(String(cFormat: "records/query, 1 client: %8.1f pages/s with the schema's index rules, %.1f without (serve --no-index-rules): ratio %.3f  (%d records)",
                     queryPages / checkedTime, queryPages / uncheckedTime, uncheckedTime / checkedTime, queried))

        // 5. A shared zone's change feed read by a participant (shared database) against the owner's own.
        let invite = ShareParticipant.invite(UserLookupInfo(emailAddress: "guest@bench.invalid"), permission: .readOnly)
        let shared = try await db.modifyRecords(ModifyRecordsRequest(operations: [.create(.share(of: nil, participants: [invite]))], zoneID: zone))
        let guest = Self.client(port: port, webAuthToken: "bench-guest")
        guard let guid = shared.results.first?.record?.shortGUID else { throw ValidationError("the zone share was not saved") }
        _ = try await guest.database(.shared).acceptShares([ShortGUID(value: guid, shouldFetchRootRecord: false)])
        let owner = try await client.database(.public).currentUser().userRecordName
        let sharedZone = ZoneID(zoneName: "Bench", ownerRecordName: owner)
        let ownerTime = try await medianSeconds(runs) { for try await _ in db.recordChangePages(zoneID: zone, resultsLimit: 200) {} }
        let participantTime = try await medianSeconds(runs) { for try await _ in guest.database(.shared).recordChangePages(zoneID: sharedZone, resultsLimit: 200) {} }
        print(String(cFormat: "records/changes of a shared zone: owner %.1f pages/s, participant (shared database) %.1f pages/s: ratio %.3f",
                     pages / ownerTime, pages / participantTime, ownerTime / participantTime))
    }
}

/// The query-scaling table (issue 33): the first page of a query, and a continuation page, in zones
/// of growing size, computed (no answer cache) over loopback, against the first size. Each answer is
/// checked to be the right records before it is timed. The scan column is the same query answered
/// by reading every record of the type (`usesQueryIndexes` false: what earlier versions did).
struct QueryScaling {
    let sizes: [Int]
    let runs: Int

    struct Case: Sendable {
        var label: String
        var query: @Sendable (Int) -> Query
        /// Checks a page's records (the zone's size given); throws when they are not the right ones.
        var check: @Sendable (Int, [Record]) throws -> Void
    }

    static func ints(_ records: [Record], _ field: String) -> [Int64] {
        records.compactMap { if case .int64(let n)? = $0.fields[field] { return n } else { return nil } }
    }

    static let cases: [Case] = [
        Case(label: "cat EQUALS", query: { _ in Query(recordType: "Item", filterBy: [Filter("cat", .equals, .string("c3"))]) }) { _, records in
            guard records.count == 200, records.allSatisfy({ $0.fields["cat"] == .string("c3") }),
                records.compactMap(\.recordName) == records.compactMap(\.recordName).sorted()
            else { throw ValidationError("cat EQUALS: wrong page") }
        },
        Case(label: "n LESS_THAN, sorted by n", query: { size in
            Query(recordType: "Item", filterBy: [Filter("n", .lessThan, .int64(Int64(size / 2)))], sortBy: [SortDescriptor("n")])
        }) { _, records in
            guard ints(records, "n") == Array(0..<200) else { throw ValidationError("n LESS_THAN: wrong page") }
        },
        Case(label: "sorted by n (descending)", query: { _ in Query(recordType: "Item", sortBy: [SortDescriptor("n", ascending: false)]) }) { size, records in
            guard ints(records, "n") == Array((Int64(size) - 200..<Int64(size)).reversed()) else { throw ValidationError("sorted by n: wrong page") }
        },
    ]

    func run() async throws {
        print("query scaling: first page of 200 records, computed over loopback (median of \(runs)); ratio to \(sizes[0]) records")
        print("| records per zone | query | indexed ms | ratio | continuation page ms | scan ms (earlier versions) |")
        print("|---:|---|---:|---:|---:|---:|")
        var base: [String: Double] = [:]
        // Reads whose cost the zone's size should not move: a change page and one lookup, printed
        // after the table.
        var others: [String] = []
        for size in sizes {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckbrowse-bench-q\(size)-\(getpid())").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var configuration = LocalServerConfiguration()
            configuration.apiTokens = ["bench"]
            configuration.users = [(name: "bench", token: "bench-user")]
            configuration.answerCacheBytes = 0
            let store = try Store(directory: directory)
            let service = try LocalCloudKit(store: store, configuration: configuration)
            let started = Date()
            try await BulkSeed.fill(
                service, container: "iCloud.bench", userName: "bench", zoneName: "Q", count: size, recordType: "Item",
                extraFields: ["cat": { .string("c\($0 % 5)") }])
            try await service.addSystemIndexes(container: "iCloud.bench", environment: .development)
            FileOutput.standardError.write(String(cFormat: "filled %d records (with their index) in %.1f s\n", size, Date().timeIntervalSince(started)))
            var scanConfiguration = configuration
            scanConfiguration.usesQueryIndexes = false
            let scanService = try LocalCloudKit(store: store, configuration: scanConfiguration)
            let (port, task) = await ServeBench.serve(service)
            let (scanPort, scanTask) = await ServeBench.serve(scanService)
            defer {
                task.cancel()
                scanTask.cancel()
            }
            let db = ServeBench.client(port: port, webAuthToken: "bench-user").database(.private)
            let scanDB = ServeBench.client(port: scanPort, webAuthToken: "bench-user").database(.private)
            let zone = ZoneID(zoneName: "Q")
            for item in Self.cases {
                let request = QueryRequest(query: item.query(size), zoneID: zone, resultsLimit: 200)
                let first = try await db.query(request)
                try item.check(size, first.records.compactMap(\.record))
                guard let marker = first.continuationMarker else { throw ValidationError("\(item.label): no continuation marker") }
                // The continuation page must be the records after the first page, in order.
                let second = try await db.query(QueryRequest(query: item.query(size), zoneID: zone, resultsLimit: 200, continuationMarker: marker))
                let scanSecond = try await scanDB.query(QueryRequest(query: item.query(size), zoneID: zone, resultsLimit: 200, continuationMarker: marker))
                guard second.records.count == 200, second.records.compactMap(\.recordName) == scanSecond.records.compactMap(\.recordName),
                    Set(second.records.compactMap(\.recordName)).isDisjoint(with: first.records.compactMap(\.recordName))
                else { throw ValidationError("\(item.label): wrong continuation page") }
                let firstTime = try await medianSeconds(runs, warmUp: true) { _ = try await db.query(request) }
                let nextTime = try await medianSeconds(runs, warmUp: true) {
                    _ = try await db.query(QueryRequest(query: item.query(size), zoneID: zone, resultsLimit: 200, continuationMarker: marker))
                }
                var scan = "—"
                if size <= 100_000 {
                    let scanned = try await scanDB.query(request)
                    guard scanned.records.compactMap(\.recordName) == first.records.compactMap(\.recordName) else {
                        throw ValidationError("\(item.label): the scan and the index disagree")
                    }
                    scan = String(cFormat: "%.2f", try await medianSeconds(runs) { _ = try await scanDB.query(request) } * 1000)
                }
                if base[item.label] == nil { base[item.label] = firstTime }
                let figures = String(cFormat: "%.2f | %.2f | %.2f", firstTime * 1000, firstTime / base[item.label]!, nextTime * 1000)
                print("| \(size) | \(item.label) | \(figures) | \(scan) |")
            }
            // The first records/changes page of 200 (the feed's order, an index walk like any page of
            // it), and a lookup of one record.
            let page = try await db.recordChanges(RecordChangesRequest(zoneID: zone, resultsLimit: 200))
            let name = String(cFormat: "item-%07d", size / 3)
            guard page.records.count == 200, try await db.lookupRecords([name], zoneID: zone).first?.record?.recordName == name else {
                throw ValidationError("changes or lookup: wrong answer")
            }
            let changesTime = try await medianSeconds(runs, warmUp: true) {
                _ = try await db.recordChanges(RecordChangesRequest(zoneID: zone, resultsLimit: 200))
            }
            let lookupTime = try await medianSeconds(runs, warmUp: true) { _ = try await db.lookupRecords([name], zoneID: zone) }
            if base["changes"] == nil { (base["changes"], base["lookup"]) = (changesTime, lookupTime) }
            others.append(String(cFormat: "| %d | %.2f | %.2f | %.2f | %.2f |", size, changesTime * 1000, changesTime / base["changes"]!, lookupTime * 1000, lookupTime / base["lookup"]!))
        }
        print("")
        print("first records/changes page (200 records) and one lookup, computed; ratio to \(sizes[0]) records")
        print("| records per zone | changes page ms | ratio | lookup ms | ratio |")
        print("|---:|---:|---:|---:|---:|")
        for line in others { print(line) }
    }
}
