import CloudKitWeb
import Foundation
import SQLiteDB
import Testing
@testable import CloudKitLocal

/// The schema rules of `cloudkit-schema.md` against a real server on loopback: index requirements of
/// queries, production's fixed schema, the public database's grants, and schema import, export,
/// deploy and reset through our endpoint. Each refusal is checked by its code and its reason text,
/// which clients match.
@Suite struct SchemaRulesTests {
    static let container = LiveServer.container

    /// Every type, index option and grant the language has, in the canonical form export writes.
    static let everything = """
        DEFINE SCHEMA

            CREATE ROLE Moderator;

            RECORD TYPE Everything (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___createdBy"  REFERENCE QUERYABLE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP SORTABLE,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                asset           ASSET,
                assets          LIST<ASSET>,
                blob            BYTES QUERYABLE SORTABLE,
                count           INT64 QUERYABLE SORTABLE,
                counts          LIST<INT64> QUERYABLE,
                legacy          NUMBER PREFERRED AS INT64,
                place           LOCATION QUERYABLE,
                ratio           DOUBLE SORTABLE,
                ref             REFERENCE QUERYABLE,
                refs            LIST<REFERENCE> QUERYABLE,
                secret          ENCRYPTED STRING,
                secretBytes     ENCRYPTED BYTES,
                tags            LIST<STRING> QUERYABLE SEARCHABLE SORTABLE,
                title           STRING QUERYABLE SEARCHABLE SORTABLE,
                when            TIMESTAMP QUERYABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Moderator
            );

            RECORD TYPE Users (
                "___createTime" TIMESTAMP,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE,
                roles           LIST<INT64>,
                GRANT WRITE TO "_creator",
                GRANT READ TO "_world"
            );

        """

    func refusal(_ body: () async throws -> Void) async -> CloudKitError? {
        do { try await body() } catch let error as CloudKitError { return error } catch { return nil }
        return nil
    }

    func query(_ db: CloudKitDatabase, _ query: Query) async throws -> [String] {
        try await db.query(QueryRequest(query: query)).records.compactMap(\.recordName).sorted()
    }

    @Test func queriesNeedTheIndexesCloudKitNeeds() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        #expect(try await db.modify([.create(record("n1", "Note", ["title": .string("hello world"), "n": .int64(1)]))]).isCompleteSuccess)
        func reason(_ q: Query) async -> String? {
            let error = await refusal { _ = try await db.query(QueryRequest(query: q)) }
            #expect(error?.serverErrorCode == .badRequest && error?.httpStatus == 400)
            return error?.reason
        }
        // Just-in-time creation indexes fields, never system fields: browsing a type needs ___recordID.
        #expect(await reason(Query(recordType: "Note")) == "Field 'recordName' is not marked queryable")
        #expect(await reason(Query(recordType: "Note", filterBy: [Filter("nope", .equals, .string("x"))])) == "Did not find field: 'nope' in type: 'Note'")
        #expect(await reason(Query(recordType: "Nothing")) == "Did not find record type: Nothing")
        #expect(await reason(Query(recordType: "Note", filterBy: [Filter(system: .createdTimestamp, .greaterThan, .timestamp(0))]))
            == "Field 'createdTimestamp' is not marked sortable")
        // JIT fields are indexed: these run.
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("title", .containsAllTokens, .string("hello"))])) == ["n1"])
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("n", .greaterThan, .int64(0))], sortBy: [SortDescriptor("title")])) == ["n1"])

        // A schema that withholds indexes.
        let schema = """
            DEFINE SCHEMA
                RECORD TYPE Bare ( body STRING );
                RECORD TYPE Note (
                    "___recordID" REFERENCE QUERYABLE,
                    title STRING QUERYABLE,
                    n INT64 QUERYABLE,
                    body STRING SORTABLE
                );
            """
        _ = try await server.client().schema(.import, text: schema)
        #expect(await reason(Query(recordType: "Bare")) == "Type is not marked indexable: Bare")
        #expect(try await query(db, Query(recordType: "Note")) == ["n1"], "recordName is queryable now")
        #expect(await reason(Query(recordType: "Note", filterBy: [Filter("body", .equals, .string("x"))])) == "Field 'body' is not marked queryable")
        #expect(await reason(Query(recordType: "Note", filterBy: [Filter("n", .lessThan, .int64(5))])) == "Field 'n' is not marked sortable")
        #expect(await reason(Query(recordType: "Note", filterBy: [Filter("title", .containsAnyTokens, .string("hello"))])) == "Field 'title' is not marked searchable")
        #expect(await reason(Query(recordType: "Note", sortBy: [SortDescriptor("title")])) == "Field 'title' is not marked sortable")
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("title", .equals, .string("hello world"))], sortBy: [SortDescriptor("body")])) == ["n1"])
    }

    /// A filter's value of another kind than its field is BAD_REQUEST (`FilterTypes`): `FilterPredicate`
    /// orders numbers before text, so `n LESS_THAN "abc"` on an INT64 field answered every record, on
    /// the indexed path and the scan alike. Kinds that compare still run: a DOUBLE or TIMESTAMP value
    /// for an INT64 field, a record name for a REFERENCE, a scalar for a list field's elements, an
    /// empty list. Query subscriptions are refused the same way.
    @Test func filterValuesMustCompareWithTheirField() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        _ = try await server.client().schema(.import, text: """
            DEFINE SCHEMA
                RECORD TYPE Note (
                    "___recordID" REFERENCE QUERYABLE,
                    title STRING QUERYABLE, n INT64 QUERYABLE SORTABLE, when TIMESTAMP QUERYABLE SORTABLE, ref REFERENCE QUERYABLE,
                    tags LIST<STRING> QUERYABLE, counts LIST<INT64> QUERYABLE
                );
            """)
        #expect(try await db.modify([
            .create(record("target", "Note", ["title": .string("target")])),
            .create(record("n1", "Note", [
                "title": .string("hello world"), "n": .int64(1), "when": .timestamp(1_000), "ref": .reference(Reference(recordName: "target")),
                "tags": .stringList(["a", "b"]), "counts": .int64List([1, 2]),
            ])),
        ]).isCompleteSuccess)
        func reason(_ filter: Filter) async -> String? {
            let error = await refusal { _ = try await db.query(QueryRequest(query: Query(recordType: "Note", filterBy: [filter]))) }
            #expect(error?.serverErrorCode == .badRequest && error?.httpStatus == 400, "\(filter)")
            return error?.reason
        }
        #expect(await reason(Filter("n", .lessThan, .string("abc"))) == "Field 'n' is INT64: LESS_THAN cannot compare it with a value of type STRING")
        #expect(await reason(Filter("title", .equals, .int64(5))) == "Field 'title' is STRING: EQUALS cannot compare it with a value of type INT64")
        #expect(await reason(Filter("n", .in, .stringList(["1", "2"]))) == "Field 'n' is INT64: IN cannot compare it with a value of type STRING_LIST")
        #expect(await reason(Filter("tags", .listContains, .int64(5))) == "Field 'tags' is STRING_LIST: LIST_CONTAINS cannot compare it with a value of type INT64")
        #expect(await reason(Filter("counts", .listContainsAny, .stringList(["x"]))) == "Field 'counts' is INT64_LIST: LIST_CONTAINS_ANY cannot compare it with a value of type STRING_LIST")
        #expect(await reason(Filter(system: .recordName, .equals, .int64(1))) == "Field 'recordName' is REFERENCE: EQUALS cannot compare it with a value of type INT64")
        // Kinds that compare: these run, and answer what they should.
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("n", .lessThan, .double(1.5))])) == ["n1"])
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("when", .greaterThan, .int64(999))])) == ["n1"])
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("ref", .equals, .string("target"))])) == ["n1"])
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("tags", .listContains, .string("b"))])) == ["n1"])
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter("n", .notIn, .int64List([]))])) == ["n1"])
        #expect(try await query(db, Query(recordType: "Note", filterBy: [Filter(system: .recordName, .equals, .reference(Reference(recordName: "n1", action: nil)))])) == ["n1"])

        let mismatched = Subscription.query("q-mismatch", Query(recordType: "Note", filterBy: [Filter("n", .greaterThan, .string("abc"))]), firesOn: [.create])
        let refused = try await db.modifySubscriptions([SubscriptionOperation(.create, mismatched)])
        #expect(refused.first?.error?.serverErrorCode == .badRequest)
        #expect(refused.first?.error?.reason == "Field 'n' is INT64: GREATER_THAN cannot compare it with a value of type STRING")
        let matching = Subscription.query("q-number", Query(recordType: "Note", filterBy: [Filter("n", .greaterThan, .double(0.5))]), firesOn: [.create])
        #expect(try await db.modifySubscriptions([SubscriptionOperation(.create, matching)]).first?.subscription?.subscriptionID == "q-number")
    }

    @Test func productionHasOnlyWhatWasDeployed() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let dev = server.client().database(.private)
        let prod = server.client(environment: .production).database(.private)
        #expect(try await dev.modify([.create(record("a", "Trip", ["city": .string("Kyoto")]))]).isCompleteSuccess)
        let before = try await prod.modify([.create(record("a", "Trip", ["city": .string("Kyoto")]))])
        #expect(before.failures.first?.serverErrorCode == .badRequest && before.failures.first?.reason == "Cannot create new type Trip in production schema")
        #expect(try await server.client(environment: .production).schema(.validate, text: "DEFINE SCHEMA RECORD TYPE Trip (city STRING);").isEmpty)

        #expect(try await server.client().schema(.deploy) == ["development's schema is now production's"])
        #expect(try await prod.modify([.create(record("a", "Trip", ["city": .string("Kyoto")]))]).isCompleteSuccess)
        let newField = try await prod.modify([.create(record("b", "Trip", ["days": .int64(3)]))])
        #expect(newField.failures.first?.reason == "Cannot create or modify field 'days' in record 'Trip' in production schema")

        // What production has cannot be removed or retyped, by an import or a deploy.
        let removing = await refusal { _ = try await server.client().schema(.import, text: "DEFINE SCHEMA RECORD TYPE Other (x STRING);") }
        #expect(removing?.serverErrorCode == .badRequest && removing?.reason == "schema refused: record type 'Trip' is in production and cannot be removed")
        let retyping = await refusal { _ = try await server.client().schema(.validate, text: "DEFINE SCHEMA RECORD TYPE Trip (city INT64);") }
        #expect(retyping?.reason == "schema refused: field 'city' of 'Trip' is STRING in production and cannot become INT64")
        let droppingField = await refusal { _ = try await server.client().schema(.import, text: "DEFINE SCHEMA RECORD TYPE Trip (other STRING);") }
        #expect(droppingField?.reason == "schema refused: field 'city' of 'Trip' is in production and cannot be removed")
        // The refused import changed nothing.
        #expect(try await server.service.schema(container: Self.container, environment: .development).recordType("Trip")?.field("city")?.type == .string)
        // Adding is allowed; deploy carries it over.
        _ = try await server.client().schema(.import, text: "DEFINE SCHEMA RECORD TYPE Trip (city STRING QUERYABLE, days INT64);")
        _ = try await server.client().schema(.deploy)
        #expect(try await prod.modify([.create(record("b", "Trip", ["days": .int64(3)]))]).isCompleteSuccess)
        // Production's indexes are enforced too.
        let unindexed = await refusal { _ = try await prod.query(QueryRequest(query: Query(recordType: "Trip", filterBy: [Filter("days", .equals, .int64(3))]))) }
        #expect(unindexed?.reason == "Field 'days' is not marked queryable")
    }

    @Test func thePublicDatabaseHonoursGrants() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let alice = server.client().database(.public)
        let bob = server.client(user: LiveServer.bob).database(.public)
        let nobody = server.client(user: nil).database(.public)
        // Just-in-time grants: the creator writes, signed-in users create, everyone reads.
        #expect(try await alice.modify([.create(record("post", "Post", ["title": .string("hi")]))]).isCompleteSuccess)
        let saved = try #require(try await alice.lookupRecords(["post"]).first?.record)
        var edit = saved
        edit.fields["title"] = .string("bob was here")
        let denied = try await bob.modify([.update(edit)])
        #expect(denied.failures.first?.serverErrorCode == .accessDenied && denied.failures.first?.reason == "WRITE operation not permitted")
        #expect(denied.failures.first?.recordName == "post")
        let deleteDenied = try await bob.modify([.forceDelete(recordName: "post")])
        #expect(deleteDenied.failures.first?.reason == "WRITE operation not permitted")
        #expect(try await bob.modify([.create(record("bobs", "Post", ["title": .string("mine")]))]).isCompleteSuccess)
        #expect(try await nobody.lookupRecords(["post"]).first?.record?.fields["title"] == .string("hi"), "_world reads")
        #expect(try await alice.modify([.update(edit)]).isCompleteSuccess, "the creator writes")

        // Imported grants: reading only for the creator, creating only for Moderators.
        let schema = """
            DEFINE SCHEMA
                CREATE ROLE Moderator;
                RECORD TYPE Post (
                    "___recordID" REFERENCE QUERYABLE,
                    title STRING QUERYABLE,
                    GRANT READ, WRITE TO "_creator",
                    GRANT READ, CREATE, WRITE TO Moderator
                );
            """
        _ = try await server.client().schema(.import, text: schema)
        let created = try await bob.modify([.create(record("another", "Post", ["title": .string("x")]))])
        #expect(created.failures.first?.serverErrorCode == .accessDenied && created.failures.first?.reason == "CREATE operation not permitted")
        let lookup = try #require(try await bob.lookupRecords(["post"]).first)
        #expect(lookup.error?.serverErrorCode == .accessDenied && lookup.error?.reason == "READ operation not permitted")
        #expect(try await query(bob, Query(recordType: "Post")) == ["bobs"], "a query leaves out what the caller may not read")
        #expect(try await query(alice, Query(recordType: "Post")) == ["post"])
        #expect(try await query(nobody, Query(recordType: "Post")).isEmpty)
        // A custom role adds up with the others.
        try await server.service.assignRole("Moderator", to: LiveServer.bob.name, container: Self.container, environment: .development)
        #expect(try await query(bob, Query(recordType: "Post")) == ["bobs", "post"])
        #expect(try await bob.modify([.create(record("another", "Post", ["title": .string("x")]))]).isCompleteSuccess)
        // Private databases are not governed by grants.
        #expect(try await server.client(user: LiveServer.bob).database(.private).modify([.create(record("p", "Post", ["title": .string("x")]))]).isCompleteSuccess)
    }

    /// A public query subscription tells its owner only of records they may READ.
    @Test func publicNotificationsFollowReadGrants() async throws {
        var settings = NotificationSettings()
        settings.holdSeconds = 0.3
        let server = try await LiveServer.start(notifications: settings)
        defer { Task { await server.stop() } }
        let alice = server.client().database(.public)
        let bobClient = server.client(user: LiveServer.bob)
        let bob = bobClient.database(.public)
        _ = try await server.client().schema(.import, text: """
            DEFINE SCHEMA
                RECORD TYPE Post ( "___recordID" REFERENCE QUERYABLE, title STRING QUERYABLE,
                    GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud" );
            """)
        let saved = try await bob.modifySubscriptions([SubscriptionOperation(.create, .query("posts", Query(recordType: "Post"), firesOn: [.create]))])
        #expect(saved.first?.subscription != nil, "\(saved)")
        let url = try #require(try await bobClient.createToken(apnsEnvironment: .development).webcourierURL)
        #expect(try await alice.modify([.create(record("alices", "Post", ["title": .string("private to alice")]))]).isCompleteSuccess)
        #expect(try await bobClient.pollWebcourier(url, timeout: 10).notification == nil, "bob may not read alice's post: no notification")
        #expect(try await bob.modify([.create(record("bobs", "Post", ["title": .string("mine")]))]).isCompleteSuccess)
        let notification = try await bobClient.pollWebcourier(url, timeout: 10).notification
        #expect(notification?.recordName == "bobs")
    }

    @Test func aSchemaFileRoundTripsThroughImportAndExport() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let client = server.client()
        #expect(try await client.schema(.import, text: Self.everything).isEmpty)
        #expect(try await client.schemaText() == Self.everything)
        // Comments, lower-case keywords, quoted names, another order and one line per type read the same.
        let scrambled = """
            -- hand-written
            define schema
              record type "Users" ( roles LIST<INT64>, grant write to "_creator", grant read to "_world" );
              create role Moderator;
              /* every type */
              record type Everything (
                when TIMESTAMP QUERYABLE, title STRING SORTABLE SEARCHABLE QUERYABLE, "tags" LIST<STRING> SORTABLE QUERYABLE SEARCHABLE,
                secretBytes ENCRYPTED BYTES, secret ENCRYPTED STRING, refs LIST<REFERENCE> QUERYABLE, ref REFERENCE QUERYABLE,
                ratio DOUBLE SORTABLE, place LOCATION QUERYABLE, legacy NUMBER PREFERRED AS INT64, counts LIST<INT64> QUERYABLE,
                count INT64 SORTABLE QUERYABLE, blob BYTES QUERYABLE SORTABLE, assets LIST<ASSET>, asset ASSET,
                "___recordID" REFERENCE QUERYABLE, "___modTime" TIMESTAMP SORTABLE, "___createdBy" REFERENCE QUERYABLE,
                "___createTime" TIMESTAMP SORTABLE QUERYABLE,
                GRANT READ, WRITE, CREATE TO Moderator, GRANT READ TO "_world", GRANT CREATE TO "_icloud", GRANT WRITE TO "_creator"
              );
            """
        _ = try await client.schema(.import, text: scrambled)
        #expect(try await client.schemaText() == Self.everything)
        // Values of the types the schema declares are accepted; encrypted ones carry their base type.
        let db = client.database(.private)
        #expect(try await db.modify([.create(record("e", "Everything", [
            "title": .string("t"), "count": .int64(1), "legacy": .int64(2), "secret": .string("s"), "tags": .stringList(["a"]),
        ]))]).isCompleteSuccess)
        let wrong = try await db.modify([.create(record("w", "Everything", ["legacy": .double(1.5)]))])
        #expect(wrong.failures.first?.reason == "invalid attempt to set value type DOUBLE for field 'legacy' for type 'Everything', defined to be: INT64")
        // A file with a mistake: the endpoint names its line and column and changes nothing.
        let bad = await refusal { _ = try await client.schema(.import, text: "DEFINE SCHEMA\n  RECORD TYPE A (x STRNG);") }
        #expect(bad?.serverErrorCode == .badRequest && bad?.reason?.hasPrefix("line 2:") == true)
        #expect(try await client.schemaText() == Self.everything)
    }

    /// A filter may name a system field by its schema name (`fieldName: "___recordID"`, as CloudKit JS
    /// apps write it, and as the index check reads it): it finds what `systemFieldName` finds. It
    /// passed the index check and then matched nothing; a sort by it was already read so.
    @Test func filtersNameSystemFieldsBySchemaNameToo() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let client = server.client()
        _ = try await client.schema(.import, text: """
            DEFINE SCHEMA RECORD TYPE Note ("___recordID" REFERENCE QUERYABLE, "___createTime" TIMESTAMP QUERYABLE SORTABLE, n INT64);
            """)
        let db = client.database(.private)
        #expect(try await db.modify([.create(record("a1", "Note", ["n": .int64(1)])), .create(record("a2", "Note", ["n": .int64(2)]))]).isCompleteSuccess)
        func names(_ filters: [Filter], sort: [CloudKitWeb.SortDescriptor]? = nil) async throws -> [String] {
            try await db.query(QueryRequest(query: Query(recordType: "Note", filterBy: filters, sortBy: sort))).records.compactMap(\.record?.recordName)
        }
        let a1 = FieldValue.reference(Reference(recordName: "a1", action: nil))
        #expect(try await names([Filter("___recordID", .equals, a1)]) == ["a1"])
        #expect(try await names([Filter(system: .recordName, .equals, a1)]) == ["a1"])
        #expect(try await Set(names([Filter("___createTime", .greaterThan, .timestamp(0))])) == ["a1", "a2"])
        #expect(try await names([Filter("___createTime", .greaterThan, .timestamp(0))], sort: [CloudKitWeb.SortDescriptor("___createTime", ascending: false)]).count == 2)
        // A query subscription reads it the same way (one evaluator).
        let sub = Subscription.query("one", Query(recordType: "Note", filterBy: [Filter("___recordID", .equals, a1)]), firesOn: [.update])
        let state = FilterPredicate.RecordState(record("a1", "Note", ["n": .int64(3)]), zone: "_defaultZone")
        #expect(FilterPredicate.evaluate(sub, .updated, before: state, after: state).fires)
    }

    /// A field the file gives another type is reported as retyped, not removed (its values go either way).
    @Test func importSaysAFieldWasRetyped() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let client = server.client()
        #expect(try await client.database(.private).modify([.create(record("k", "Keep", ["n": .int64(1), "gone": .string("y")]))]).isCompleteSuccess)
        let changes = try await client.schema(.import, text: "DEFINE SCHEMA RECORD TYPE Keep (\"___recordID\" REFERENCE QUERYABLE, n DOUBLE);")
        #expect(changes == ["removed field Keep.gone", "retyped field Keep.n (INT64 → DOUBLE): its values were dropped", "1 record lost values of removed or retyped fields"])
    }

    @Test func importDropsWhatItLeavesOutAndResetDeletesDevelopmentData() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let client = server.client()
        let db = client.database(.private)
        #expect(try await db.modify([
            .create(record("k", "Keep", ["a": .string("x"), "b": .string("y")])), .create(record("g", "Gone", ["c": .int64(1)])),
        ]).isCompleteSuccess)
        let changes = try await client.schema(.import, text: "DEFINE SCHEMA RECORD TYPE Keep (\"___recordID\" REFERENCE QUERYABLE, a STRING);")
        #expect(changes == ["removed record type Gone (1 development record dropped)", "removed field Keep.b", "1 record lost values of removed fields"])
        let kept = try #require(try await db.lookupRecords(["k", "g"]).map { $0 })
        #expect(kept[0].record?.fields == ["a": .string("x")])
        #expect(kept[1].error?.serverErrorCode == .notFound)

        _ = try await client.schema(.deploy)
        #expect(try await db.modify([.create(record("k2", "Keep", ["a": .string("z"), "fresh": .int64(1)]))]).isCompleteSuccess)
        let zone = ZoneID(zoneName: "Z")
        _ = try await db.modifyZones([ZoneOperation(.create, zone)])
        let reset = try await client.schema(.reset)
        #expect(reset == ["deleted development data: 2 records, 1 zones, 0 subscriptions"])
        // Development is production's schema again (no `fresh`), and empty.
        #expect(try await server.service.schema(container: Self.container, environment: .development).recordType("Keep")?.field("fresh") == nil)
        #expect(try await query(db, Query(recordType: "Keep")).isEmpty)
        #expect(try await db.listZones().count == 1)
        // The endpoint needs the container's API token.
        let stranger = await refusal { _ = try await server.client(apiToken: "wrong").schemaText() }
        #expect(stranger?.serverErrorCode == .authenticationFailed)
    }

    /// A data directory an earlier version wrote (schema v4: types and fields, no indexes or grants)
    /// opens with every field indexed and production as development, so what worked still works.
    @Test func dataFromBeforeSchemasKeepsWorking() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckl-old-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: (directory as NSString).appendingPathComponent("cloudkit.sqlite"))
        try Store.migrator.migrate(queue, upTo: "v4-record-parent")
        try await queue.write { db in
            for (field, type) in [("", ""), ("title", "STRING"), ("n", "INT64")] {
                try db.execute(
                    sql: "INSERT INTO field_schema (container, environment, record_type, field, type) VALUES (?, 'development', 'Old', ?, ?)",
                    arguments: [Self.container, field, type])
            }
        }
        try queue.close()
        let server = try await LiveServer.start(directory: directory)
        defer { Task { await server.stop() } }
        for environment in [CloudKitEnvironment.development, .production] {
            let db = server.client(environment: environment).database(.public)
            #expect(try await db.modify([.create(record("r-\(environment.rawValue)", "Old", ["title": .string("t"), "n": .int64(1)]))]).isCompleteSuccess)
            #expect(try await query(db, Query(recordType: "Old", sortBy: [SortDescriptor(system: .modifiedTimestamp)])) == ["r-\(environment.rawValue)"])
            // Another signed-in user may still edit (the inferred grants let any signed-in user write).
            let bob = server.client(user: LiveServer.bob, environment: environment).database(.public)
            var edit = try #require(try await bob.lookupRecords(["r-\(environment.rawValue)"]).first?.record)
            edit.fields["n"] = .int64(2)
            #expect(try await bob.modify([.update(edit)]).isCompleteSuccess)
        }
        let text = try await server.client().schemaText()
        #expect(text.hasPrefix("// Inferred from data written before ckbrowse kept schemas"))
        #expect(text.contains("\"___recordID\"   REFERENCE QUERYABLE SORTABLE,") && text.contains("title           STRING QUERYABLE SEARCHABLE SORTABLE,"))
    }
}
