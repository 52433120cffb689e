import CloudKitWeb
import Foundation
import SQLiteDB
import Testing
@testable import CloudKitLocal

/// The query index (issue 33): queries answered by SQLite from `field_index` find the same records
/// in the same order as the evaluator reading every record (the oracle: `usesQueryIndexes` false),
/// SQLite's plans walk indexes, a store from before the index gets it on start, and a fixture reset
/// keeps the schema the server started with.
@Suite struct QueryIndexTests {
    static let container = LiveServer.container

    static let schema = """
        DEFINE SCHEMA
            RECORD TYPE T (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE QUERYABLE,
                "___modTime"    TIMESTAMP QUERYABLE SORTABLE,
                "___recordID"   REFERENCE QUERYABLE,
                b               BYTES QUERYABLE SORTABLE,
                d               DOUBLE QUERYABLE SORTABLE,
                i               INT64 QUERYABLE SORTABLE,
                il              LIST<INT64> QUERYABLE,
                loc             LOCATION QUERYABLE,
                r               REFERENCE QUERYABLE,
                s               STRING QUERYABLE SEARCHABLE SORTABLE,
                sl              LIST<STRING> QUERYABLE SEARCHABLE SORTABLE,
                t               TIMESTAMP QUERYABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );
        """

    static let strings = [
        "", "a", "A", "apple", "apple pie", "Apple Pie", "banana split", "b", "é", "e\u{301}", "éclair", "e\u{301}clair", "zebra",
        "10", "9", "über alles", "naïve café", "日本語 テキスト", "a\u{20DD}", "pie", "Z",
    ]
    static let prefixes = ["", "a", "ap", "e", "é", "A", "日", "p", "naï", "zz"]
    static let words = ["apple", "pie apple", "CAFÉ", "", "zzz", "banana", "alles über", "テキスト"]
    static let ints: [Int64] = [-5, -1, 0, 1, 2, 3, 7, 1 << 53, (1 << 53) + 1, Int64.max]
    static let doubles: [Double] = [-1.5, 0, -0.0, 0.5, 2.25, 3, 1e300]

    /// A client of `service` through the in-process transport, as alice.
    static func client(_ service: LocalCloudKit) -> CloudKitDatabase {
        CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: container, retryPolicy: .none),
            credentials: .apiToken(LiveServer.apiToken, webAuthToken: LiveServer.alice.token), transport: InProcessTransport(service: service)
        ).database(.private)
    }

    static func configuration(indexes: Bool) -> LocalServerConfiguration {
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = [LiveServer.apiToken]
        configuration.users = [LiveServer.alice]
        configuration.usesQueryIndexes = indexes
        return configuration
    }

    static func temporaryDirectory(_ label: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ckl-\(label)-\(UUID().uuidString)").path
    }

    // MARK: Random data and queries

    struct Generator {
        var random: SplitMix64
        let base: Int64 = 1_700_000_000_000

        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }
        mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        mutating func some<T>(_ values: [T], max: Int) -> [T] { (0..<Int.random(in: 0...max, using: &random)).map { _ in pick(values) } }

        mutating func location() -> Location {
            if chance(0.05) { return Location(latitude: 95, longitude: 10) }  // off the globe
            if chance(0.1) { return Location(latitude: pick([-89.99, 89.99, 0]), longitude: pick([179.99, -179.99, 0])) }
            return Location(latitude: 37 + Double.random(in: -0.5...0.5, using: &random), longitude: -122 + Double.random(in: -0.5...0.5, using: &random))
        }

        mutating func value(_ field: String) -> FieldValue {
            switch field {
            case "s": return .string(pick(QueryIndexTests.strings))
            case "i": return .int64(pick(QueryIndexTests.ints))
            case "d": return .double(pick(QueryIndexTests.doubles))
            case "t": return .timestamp(base + Int64.random(in: 0...20, using: &random) * 1000)
            case "r": return .reference(Reference(recordName: "n\(Int.random(in: 0...9, using: &random))", action: nil))
            case "b": return .bytes(Data([UInt8.random(in: 0...3, using: &random)]))
            case "loc": return .location(location())
            case "sl": return .stringList(some(QueryIndexTests.strings, max: 3))
            default: return .int64List(some(QueryIndexTests.ints, max: 3))
            }
        }

        static let fields = ["s", "i", "d", "t", "r", "b", "loc", "sl", "il"]

        mutating func fields() -> [String: FieldValue] {
            var fields: [String: FieldValue] = [:]
            for field in Self.fields where chance(0.75) { fields[field] = value(field) }
            return fields
        }

        /// A list value of the field's element type (or of its own type for a scalar field).
        mutating func list(_ field: String) -> FieldValue {
            let n = Int.random(in: 0...3, using: &random)
            switch field {
            case "s", "sl": return .stringList((0..<n).map { _ in pick(QueryIndexTests.strings) })
            case "i", "il": return .int64List((0..<n).map { _ in pick(QueryIndexTests.ints) })
            case "d": return .doubleList((0..<n).map { _ in pick(QueryIndexTests.doubles) })
            case "t": return .timestampList((0..<n).map { _ in base + Int64.random(in: 0...20, using: &random) * 1000 })
            case "r": return .referenceList((0..<n).map { _ in Reference(recordName: "n\(Int.random(in: 0...9, using: &random))", action: nil) })
            default: return .int64List([1])
            }
        }

        mutating func filter(names: [String], creator: String) -> Filter {
            if chance(0.15) {
                let system = pick([SystemFieldName.createdTimestamp, .modifiedTimestamp, .recordName, .createdUserRecordName])
                switch system {
                case .recordName, .createdUserRecordName:
                    let ref: (String) -> FieldValue = { .reference(Reference(recordName: $0, action: nil)) }
                    let comparator = pick([CloudKitWeb.Comparator.equals, .notEquals, .in, .notIn])
                    let one = system == .recordName ? pick(names) : creator
                    if comparator == .in || comparator == .notIn {
                        return Filter(system: system, comparator, .referenceList([Reference(recordName: one, action: nil), Reference(recordName: pick(names), action: nil)]))
                    }
                    return Filter(system: system, comparator, ref(one))
                default:
                    // Records are all written within a few seconds: compare with now, give or take.
                    let now = Int64(Date().timeIntervalSince1970 * 1000)
                    return Filter(system: system, pick([.lessThan, .greaterThan, .lessThanOrEquals, .notEquals]), .timestamp(now + pick([-3_600_000, 3_600_000])))
                }
            }
            let field = pick(Self.fields)
            let isList = field == "sl" || field == "il"
            let comparators: [CloudKitWeb.Comparator]
            switch field {
            case "s": comparators = [.equals, .notEquals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals, .in, .notIn, .beginsWith, .notBeginsWith, .containsAllTokens, .containsAnyTokens]
            case "i", "d", "t": comparators = [.equals, .notEquals, .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals, .in, .notIn]
            case "r": comparators = [.equals, .notEquals, .in, .notIn]
            case "b": comparators = [.equals, .notEquals]
            case "loc": comparators = [.near]
            case "sl": comparators = [.listContains, .notListContains, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll, .listMemberBeginsWith, .notListMemberBeginsWith]
            default: comparators = [.listContains, .notListContains, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll]
            }
            // Now and then a comparator or a value of another type: both ways must agree on those too.
            let comparator = chance(0.05) ? pick(CloudKitWeb.Comparator.all) : pick(comparators)
            switch comparator {
            case .near:
                return Filter(field, .near, .location(location()), distance: pick([100, 5_000, 50_000, 1e7, -1]))
            case .beginsWith, .notBeginsWith, .listMemberBeginsWith, .notListMemberBeginsWith:
                return Filter(field, comparator, .string(pick(QueryIndexTests.prefixes)))
            case .containsAllTokens, .containsAnyTokens:
                return Filter(field, comparator, .string(pick(QueryIndexTests.words)))
            case .in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll:
                return Filter(field, comparator, list(field))
            case .listContains, .notListContains:
                return Filter(field, comparator, value(field == "sl" ? "s" : "i"))
            default:
                if chance(0.05) { return Filter(field, comparator, .string("7")) }
                if chance(0.05) { return Filter(field, comparator, .int64(3)) }
                return Filter(field, comparator, isList ? value(field == "sl" ? "s" : "i") : value(field))
            }
        }

        mutating func sort() -> [CloudKitWeb.SortDescriptor]? {
            if chance(0.35) { return nil }
            if chance(0.05) { return [SortDescriptor("loc", relativeLocation: location())] }
            if chance(0.05) { return [SortDescriptor("i", ascending: chance(0.5)), SortDescriptor("s")] }
            if chance(0.2) { return [SortDescriptor(system: pick([.createdTimestamp, .modifiedTimestamp]), ascending: chance(0.5))] }
            return [SortDescriptor(pick(["s", "i", "d", "t", "b"]), ascending: chance(0.5))]
        }
    }

    /// Every page of a query: the records' names per page, or the error's code and reason.
    enum Answer: Equatable {
        case success([[String]])
        case failure(String)
    }

    static func pages(_ db: CloudKitDatabase, _ query: Query, limit: Int, zone: ZoneID) async -> Answer {
        var pages: [[String]] = []
        var marker: String?
        do {
            repeat {
                let answer = try await db.query(QueryRequest(query: query, zoneID: zone, resultsLimit: limit, continuationMarker: marker))
                pages.append(answer.records.compactMap(\.recordName))
                marker = answer.continuationMarker
            } while marker != nil && pages.count < 60
            return .success(pages)
        } catch let error as CloudKitError {
            return .failure("\(error.serverErrorCode?.rawValue ?? "?"): \(error.reason ?? "")")
        } catch {
            return .failure("\(error)")
        }
    }

    @Test func theIndexFindsWhatTheEvaluatorFindsInTheSameOrder() async throws {
        let store = try Store(directory: Self.temporaryDirectory("oracle"))
        let indexed = try LocalCloudKit(store: store, configuration: Self.configuration(indexes: true))
        let oracle = try LocalCloudKit(store: store, configuration: Self.configuration(indexes: false))
        _ = try await indexed.importSchema(try SchemaLanguage.parse(Self.schema), container: Self.container)
        let db = Self.client(indexed), truth = Self.client(oracle)
        let zone = ZoneID(zoneName: "Z")
        _ = try await db.modifyZones([ZoneOperation(.create, zone)])
        var generator = Generator(random: SplitMix64(seed: 33))
        var names = (0..<260).map { String(format: "n%03d", $0) }
        names += ["É-1", "e\u{301}-2", "Z-up", "a-low"]
        for chunk in stride(from: 0, to: names.count, by: 100) {
            let ops = names[chunk..<min(chunk + 100, names.count)].map { RecordOperation.create(record($0, "T", generator.fields())) }
            #expect(try await db.modifyRecords(ModifyRecordsRequest(operations: ops, zoneID: zone)).isCompleteSuccess)
        }
        let creator = LocalCloudKit.userRecordName(for: LiveServer.alice.name)
        var compared = 0, withRecords = 0, refusals = 0
        for round in 0..<4 {
            if round > 0 {
                // Updates (partial, some clearing fields), replacements and deletes between rounds: the
                // index follows every write path.
                let current = try await db.lookupRecords(Array(names.shuffled(using: &generator.random).prefix(60)), zoneID: zone).compactMap(\.record)
                var ops: [RecordOperation] = []
                for (k, record) in current.enumerated() {
                    switch k % 4 {
                    case 0:
                        var change = Record(recordName: record.recordName, recordChangeTag: record.recordChangeTag, fields: [:])
                        for field in Generator.fields where generator.chance(0.3) { change.fields[field] = generator.chance(0.2) ? .null : generator.value(field) }
                        ops.append(.update(change))
                    case 1:
                        var change = record
                        change.fields = generator.fields()
                        ops.append(.replace(change))
                    case 2:
                        ops.append(.delete(recordName: record.recordName, recordChangeTag: record.recordChangeTag))
                    default:
                        ops.append(RecordOperation(.forceUpdate, Record(recordName: record.recordName, fields: ["s": generator.value("s")])))
                    }
                }
                let deleted = Set(current.enumerated().filter { $0.offset % 4 == 2 }.map(\.element.recordName))
                #expect(try await db.modifyRecords(ModifyRecordsRequest(operations: ops, zoneID: zone)).isCompleteSuccess)
                let fresh = (0..<15).map { "new-\(round)-\($0)" }
                #expect(try await db.modifyRecords(ModifyRecordsRequest(operations: fresh.map { .create(record($0, "T", generator.fields())) }, zoneID: zone)).isCompleteSuccess)
                names = names.filter { !deleted.contains($0) } + fresh
            }
            for _ in 0..<60 {
                let filters = (0..<Int.random(in: 0...3, using: &generator.random)).map { _ in generator.filter(names: names, creator: creator) }
                let query = Query(recordType: "T", filterBy: filters, sortBy: generator.sort())
                let limit = generator.pick([5, 12, 40, 200])
                let expected = await Self.pages(truth, query, limit: limit, zone: zone)
                let answered = await Self.pages(db, query, limit: limit, zone: zone)
                #expect(answered == expected, "\(query.json.text) limit \(limit)")
                compared += 1
                if case .success(let pages) = expected, !pages.joined().isEmpty { withRecords += 1 }
                if case .failure = expected { refusals += 1 }
                // A marker from one way of answering continues on the other.
                if case .success(let pages) = answered, pages.count > 1 {
                    let first = try await db.query(QueryRequest(query: query, zoneID: zone, resultsLimit: limit))
                    let second = try await truth.query(QueryRequest(query: query, zoneID: zone, resultsLimit: limit, continuationMarker: first.continuationMarker))
                    #expect(second.records.compactMap(\.recordName) == pages[1])
                }
            }
        }
        #expect(compared == 240 && withRecords > 100 && refusals < 40, "compared \(compared), with records \(withRecords), refused \(refusals)")
        // The rows the writes left (each update, replace, delete and create keeping its record's rows)
        // are the rows a rebuild from the records writes.
        let rows = "SELECT type, field, kind, quote(v), quote(w), zone, name FROM field_index ORDER BY 1, 2, 3, 4, 5, 6, 7"
        let (kept, rebuilt) = try await store.pool.write { db in
            let kept = try Row.fetchAll(db, sql: rows).map(\.databaseValues)
            let spec = try FieldIndex.spec(db, container: Self.container, environment: "development", type: "T")
            try FieldIndex.rebuild(db, container: Self.container, environment: "development", type: "T", spec: spec)
            return (kept, try Row.fetchAll(db, sql: rows).map(\.databaseValues))
        }
        #expect(kept.count > 1000)
        #expect(kept == rebuilt)
    }

    // MARK: Plans

    @Test func indexedQueriesDoNotScanTheTypesRecords() async throws {
        let store = try Store(directory: Self.temporaryDirectory("plan"))
        let service = try LocalCloudKit(store: store, configuration: Self.configuration(indexes: true))
        try await BulkSeed.fill(
            service, container: Self.container, userName: LiveServer.alice.name, zoneName: "Big", count: 3_000, recordType: "Item",
            extraFields: ["cat": { .string("c\($0 % 10)") }, "tags": { .stringList(["t\($0 % 7)", "u\($0 % 3)"]) }])
        let queries: [(Query, expected: String)] = [
            (Query(recordType: "Item", filterBy: [Filter("cat", .equals, .string("c3"))]), "equal"),
            (Query(recordType: "Item", filterBy: [Filter("n", .lessThan, .int64(1_000))], sortBy: [SortDescriptor("n")]), "field"),
            (Query(recordType: "Item", sortBy: [SortDescriptor("n", ascending: false)]), "field"),
            (Query(recordType: "Item", filterBy: [Filter("cat", .equals, .string("c3"))], sortBy: [SortDescriptor("title")]), "field"),
            (Query(recordType: "Item", filterBy: [Filter("n", .greaterThan, .int64(2_900))]), "range"),
            (Query(recordType: "Item", filterBy: [Filter("n", .in, .int64List([5, 6, 7]))]), "range"),
            (Query(recordType: "Item", filterBy: [Filter("title", .beginsWith, .string("Item 12"))]), "range"),
            (Query(recordType: "Item", filterBy: [Filter("tags", .listContains, .string("t3"))]), "equal"),
            (Query(recordType: "Item", filterBy: [Filter("title", .containsAllTokens, .string("item 7"))]), "equal"),
            (Query(recordType: "Item", filterBy: [Filter("n", .greaterThan, .int64(10))]), "names"),
            (Query(recordType: "Item", filterBy: [Filter("cat", .notEquals, .string("c1"))], sortBy: [SortDescriptor(system: .createdTimestamp, ascending: false)]), "time"),
            (Query(recordType: "Item", sortBy: [SortDescriptor(system: .modifiedTimestamp)]), "time"),
            (Query(recordType: "Item"), "names"),
        ]
        try await store.pool.read { db in
            // Migration v13 dropped `record (db, zone, type)`: these plans do without it.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'record_types'") == 0)
            let dbID = try #require(try Int64.fetchOne(db, sql: "SELECT db FROM record LIMIT 1"))
            let type = try #require(try SchemaTables.type(db, container: Self.container, environment: .development, name: "Item"))
            for (query, expected) in queries {
                let plan = try #require(try IndexedQuery.plan(query, spec: FieldIndex.Spec(type), db, dbID: dbID, zone: "Big"), "\(query.json.text)")
                #expect(String(describing: plan.source).hasPrefix(expected), "\(query.json.text): \(plan.source)")
                let position = QueryPosition(keys: (query.sortBy ?? []).map { _ in .number(5) }, name: "item-0000100", zone: "Big")
                for after in [nil, position] {
                    for part in plan.statements(dbID: dbID, zone: "Big", type: "Item", after: after) {
                        let details: [String] = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + part.sql, arguments: StatementArguments(part.arguments)).map { $0["detail"] }
                        let text = details.joined(separator: "; ")
                        #expect(!details.contains { $0.hasPrefix("SCAN") }, "a full scan: \(text) for \(query.json.text)")
                        if expected != "range" {
                            #expect(!details.contains { $0.contains("TEMP B-TREE FOR ORDER BY") }, "a sort of every match: \(text) for \(query.json.text)")
                        }
                    }
                }
            }
        }
    }

    // MARK: Data from an earlier version

    /// A data directory the previous release wrote (migrations up to v9, rows as records/modify wrote
    /// them) gets its query index when the server starts, and its queries are answered from it.
    @Test func aStoreFromTheLastReleaseGetsItsIndexOnStart() async throws {
        let directory = Self.temporaryDirectory("v9")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: (directory as NSString).appendingPathComponent("cloudkit.sqlite"))
        try Store.migrator.migrate(queue, upTo: "v9-single-use-uploads")
        let owner = LocalCloudKit.userRecordName(for: LiveServer.alice.name)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO ckdb (id, container, environment, scope, owner, seq) VALUES (1, ?, 'development', 'private', ?, 100)", arguments: [Self.container, owner])
            try db.execute(sql: "INSERT INTO zone (db, name, owner, incarnation, seq) VALUES (1, '_defaultZone', ?, 0, 0), (1, 'Z', ?, 1, 100)", arguments: [owner, owner])
            for (field, type, indexes) in [("", "", ""), ("___recordID", "REFERENCE", "QUERYABLE"), ("n", "INT64", "QUERYABLE SORTABLE"),
                                           ("title", "STRING", "QUERYABLE SEARCHABLE SORTABLE"), ("tags", "STRING_LIST", "QUERYABLE SEARCHABLE SORTABLE")] {
                try db.execute(
                    sql: "INSERT INTO field_schema (container, environment, record_type, field, type, indexes) VALUES (?, 'development', 'Old', ?, ?, ?)",
                    arguments: [Self.container, field, type, indexes])
            }
            try db.execute(sql: "INSERT INTO schema_origin (container, environment, origin) VALUES (?, 'development', 'imported')", arguments: [Self.container])
            for i in 0..<50 {
                var fields: [String: FieldValue] = ["title": .string("Old \(i % 5)"), "tags": .stringList(["x\(i % 3)"])]
                if i % 10 != 0 { fields["n"] = .int64(Int64(49 - i)) }
                try db.execute(
                    sql: """
                        INSERT INTO record (db, zone, name, type, tag, fields, created_ts, created_user, created_device, modified_ts, modified_user,
                          modified_device, deleted, seq) VALUES (1, 'Z', ?, 'Old', ?, ?, ?, ?, 'x', ?, ?, 'x', 0, ?)
                        """,
                    arguments: [String(format: "old-%02d", i), "t\(i)", Record.encodeStoredFields(fields), 1_700_000_000_000 + Int64(i), owner, 1_700_000_000_000 + Int64(i), owner, i + 1])
            }
        }
        try queue.close()
        let server = try await LiveServer.start(directory: directory)
        defer { Task { await server.stop() } }
        let rows = try await server.service.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM field_index") ?? 0 }
        // n: 45 values + 5 NULL rows; title: 50 values + 100 tokens; tags: 50 present + 50 elements.
        #expect(rows == 50 + 150 + 100)
        let db = server.client().database(.private)
        let zone = ZoneID(zoneName: "Z")
        let sorted = try await db.query(QueryRequest(query: Query(recordType: "Old", filterBy: [Filter("n", .lessThan, .int64(5))], sortBy: [SortDescriptor("n")]), zoneID: zone))
        #expect(sorted.records.compactMap(\.recordName) == ["old-49", "old-48", "old-47", "old-46", "old-45"].filter { $0 != "old-40" })
        let tagged = try await db.query(QueryRequest(query: Query(recordType: "Old", filterBy: [Filter("tags", .listContains, .string("x1")), Filter("title", .equals, .string("Old 1"))]), zoneID: zone))
        #expect(tagged.records.compactMap(\.recordName) == ["old-01", "old-16", "old-31", "old-46"])
        // Missing values last, in both directions.
        let all = try await db.query(QueryRequest(query: Query(recordType: "Old", sortBy: [SortDescriptor("n", ascending: false)]), zoneID: zone, resultsLimit: 200))
        #expect(all.records.compactMap(\.recordName).suffix(5) == ["old-00", "old-10", "old-20", "old-30", "old-40"])
        #expect(all.records.first?.recordName == "old-01")
    }

    // MARK: Fixture reset

    /// A snapshot an earlier version exported (a store the migrations left at v12, which still had
    /// `record_types`) is imported as it is, and the migrations drop the index when a store opens it.
    @Test func aSnapshotFromBeforeTheIndexWasDroppedIsImportedAndMigrated() async throws {
        let count = "SELECT count(*) FROM sqlite_master WHERE name = 'record_types'"
        let snapshot = Self.temporaryDirectory("snapshot-v12")
        try FileManager.default.createDirectory(atPath: snapshot, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: (snapshot as NSString).appendingPathComponent("cloudkit.sqlite"))
        try Store.migrator.migrate(queue, upTo: "v12-schema-version")
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: count) } == 1)
        try queue.close()
        try #"{"format":"ckbrowse-snapshot","version":1,"created":"2026-12-01T00:00:00Z"}"#
            .write(toFile: (snapshot as NSString).appendingPathComponent(Store.snapshotManifest), atomically: true, encoding: .utf8)
        let directory = Self.temporaryDirectory("imported-v12")
        try Store.importSnapshot(from: snapshot, into: directory)
        let store = try Store(directory: directory)
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: count) } == 0)
    }

    /// A reset between tests returns the container to what the server started with: the schema file
    /// (types, indexes) stays, what tests created just in time goes, and queries keep their indexes.
    @Test func aResetKeepsTheSchemaTheServerStartedWith() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let schema = try SchemaLanguage.parse("""
            DEFINE SCHEMA
                RECORD TYPE Task (
                    "___recordID" REFERENCE QUERYABLE,
                    n             INT64 QUERYABLE SORTABLE,
                    title         STRING QUERYABLE SEARCHABLE SORTABLE,
                    GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world"
                );
            """)
        _ = try await server.service.importSchema(schema, container: Self.container)
        try server.service.markStartingState()  // what `serve --schema` does once it has imported the file
        let db = server.client().database(.private)
        let query = QueryRequest(query: Query(recordType: "Task", filterBy: [Filter("n", .lessThan, .int64(3))], sortBy: [SortDescriptor("n", ascending: false)]))
        for round in 0..<3 {
            let ops = (0..<6).map { RecordOperation.create(record("task-\(round)-\($0)", "Task", ["n": .int64(Int64($0)), "title": .string("t"), "extra\(round)": .string("x")])) }
            #expect(try await db.modify(ops).isCompleteSuccess)
            #expect(try await db.query(query).records.compactMap(\.recordName) == ["task-\(round)-2", "task-\(round)-1", "task-\(round)-0"])
            let text = try await server.client().schemaText()
            #expect(text.contains("extra\(round)"), "created just in time")
            let reset = try await server.raw(.post, "/admin/1/\(Self.container)/development/reset", query: "ckAPIToken=\(LiveServer.apiToken)")
            #expect(reset.status == 200)
            let after = try await server.client().schemaText()
            #expect(!after.contains("extra\(round)") && after.contains("INT64 QUERYABLE SORTABLE"), "\(after)")
            #expect(try await db.query(query).records.isEmpty)
            let rows = try await server.service.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM field_index") ?? 0 }
            #expect(rows == 0)
        }
    }
}

/// `SchemaTables.version`: what is read from the schema tables is kept while it reads the same.
@Suite struct SchemaVersionTests {
    @Test func theVersionChangesWithTheSchemaOnlyAndNeverComesBack() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let pool = server.service.store.pool
        func version() throws -> Int64 { try pool.read { db in try SchemaTables.version(db) } }
        let start = try version()
        // Data does not move it (a record of a type already known).
        let db = server.client().database(.private)
        #expect(try await db.modify([.create(record("a", "Note", ["title": .string("x")]))]).isCompleteSuccess)
        let afterType = try version()
        #expect(afterType != start, "a type made just in time is a schema write")
        #expect(try await db.modify([.create(record("b", "Note", ["title": .string("y")]))]).isCompleteSuccess)
        #expect(try version() == afterType, "a record of a known type is not")
        // A schema write rolled back leaves the version as it was; the next one gives a value not seen.
        struct Abort: Error { let version: Int64 }
        var seen: Int64 = 0
        do {
            try await pool.write { db in
                try db.execute(sql: "UPDATE field_schema SET indexes = indexes WHERE record_type = 'Note'")
                throw Abort(version: try SchemaTables.version(db))
            }
        } catch let abort as Abort { seen = abort.version }
        #expect(seen != 0 && seen != afterType)
        #expect(try version() == afterType)
        try await pool.write { db in try db.execute(sql: "UPDATE field_schema SET indexes = indexes WHERE record_type = 'Note'") }
        let next = try version()
        #expect(next != afterType && next != seen)
        // The record type read through the memory follows: a field added just in time is seen.
        #expect(try await db.modify([.create(record("c", "Note", ["title": .string("z"), "later": .int64(1)]))]).isCompleteSuccess)
        let note = try await server.service.schema(container: LiveServer.container, environment: .development).recordType("Note")
        #expect(note?.fields.contains { $0.name == "later" } == true)
    }

    /// Writes keep what they read of a type's schema (its fields' types, its indexed fields) across
    /// requests at one schema version: whatever moves the version is seen by the next write, and a
    /// field made just in time by an operation that failed is not.
    @Test func writesFollowTheSchemaTheyKeep() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try server.service.markStartingState()
        func code(_ result: ModifyRecordsResult) -> ServerErrorCode? { result.results.first?.error?.serverErrorCode }
        #expect(try await db.modify([.create(record("a", "Kept", ["n": .int64(1)]))]).isCompleteSuccess)
        // Kept: n is INT64 from now on, in every later request.
        #expect(try await code(db.modify([.create(record("b", "Kept", ["n": .string("one")]))])) == .badRequest)
        #expect(try await code(db.modify([.create(record("c", "Kept", ["n": .string("one")]))])) == .badRequest)
        // A reset takes the type made just in time: n may be a STRING now.
        let reset = try await server.raw(.post, "/admin/1/\(LiveServer.container)/development/reset", query: "ckAPIToken=\(LiveServer.apiToken)")
        #expect(reset.status == 200)
        #expect(try await db.modify([.create(record("d", "Kept", ["n": .string("one")]))]).isCompleteSuccess)
        #expect(try await code(db.modify([.create(record("e", "Kept", ["n": .int64(2)]))])) == .badRequest)
        // A field made just in time by an operation that then fails (a record over 1 MB) is rolled back
        // with it: the next request may make it with another type.
        let big = String(repeating: "x", count: 1_100_000)
        let partial = try await db.modify([.create(record("f", "Kept", ["n": .string("two")])), .create(record("g", "Kept", ["huge": .string(big)]))], atomic: false)
        #expect(partial.results[0].record != nil && partial.results[1].error?.serverErrorCode == .badRequest)
        #expect(try await db.modify([.create(record("h", "Kept", ["huge": .int64(3)]))]).isCompleteSuccess)
        // Within a request too: in an atomic batch that fails, each operation is judged as it would be
        // alone after the ones before it. The third sees the field the first made, after the second
        // failed and was rolled back, and refuses a STRING for it.
        let failed = try await db.modify(
            [.create(record("j", "Kept", ["p": .int64(5)])), .create(record("d", "Kept", ["n": .string("dup")])), .create(record("k", "Kept", ["p": .string("s")]))],
            atomic: true)
        #expect(failed.results.map { $0.error?.serverErrorCode } == [.atomicError, .exists, .badRequest])
        // All of it rolled back: the field is gone, and the next request makes it a STRING.
        #expect(try await db.modify([.create(record("k", "Kept", ["p": .string("s")]))]).isCompleteSuccess)
        // The indexes a write keeps follow a schema import. An import that drops huge's indexes, a write
        // (which keeps the type's index list without huge), then an import that makes huge QUERYABLE and
        // SORTABLE again (indexing the records there are): the next write must index huge too, or the
        // query below misses it.
        func kept(_ huge: String) throws -> CloudKitSchema {
            try SchemaLanguage.parse("""
                DEFINE SCHEMA
                    RECORD TYPE Kept (
                        "___recordID" REFERENCE QUERYABLE,
                        n             STRING QUERYABLE SORTABLE,
                        p             STRING,
                        huge          \(huge),
                        GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world"
                    );
                """)
        }
        _ = try await server.service.importSchema(try kept("INT64"), container: LiveServer.container)
        #expect(try await db.modify([.create(record("i1", "Kept", ["huge": .int64(4)]))]).isCompleteSuccess)
        _ = try await server.service.importSchema(try kept("INT64 QUERYABLE SORTABLE"), container: LiveServer.container)
        #expect(try await db.modify([.create(record("i2", "Kept", ["huge": .int64(5)]))]).isCompleteSuccess)
        let query = QueryRequest(query: Query(recordType: "Kept", filterBy: [Filter("huge", .greaterThan, .int64(0))], sortBy: [SortDescriptor("huge")]))
        #expect(try await db.query(query).records.compactMap(\.recordName) == ["h", "i1", "i2"])
    }
}
