import CloudKitWeb
import Testing
@testable import RecordBrowser
import Foundation

/// Issue 31: what the subscription editor refuses before anything is sent, each with its reason.
@Suite struct SubscriptionTemplateTests {
    static let context = SubscriptionTemplate.Context(database: .private, environment: .development,
                                                      schema: SchemaScreenTests.known(), zones: ["Gallery", "Drafts"])

    func problem(_ json: String, _ context: SubscriptionTemplate.Context = context) -> String? {
        do { _ = try SubscriptionTemplate.parse(json, context: context); return nil } catch { return error.description }
    }

    static let good = #"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Artwork", "filterBy": [{"fieldName": "title", "comparator": "BEGINS_WITH", "fieldValue": {"value": "A", "type": "STRING"}}]}, "firesOn": ["create"]}"#

    @Test func aValidSubscriptionParsesAndTheTemplateRoundTrips() throws {
        let parsed = try #require(try SubscriptionTemplate.parse(Self.good, context: Self.context))
        #expect(parsed.query?.filterBy?.first?.comparator == .beginsWith)
        // The template of what was parsed parses back to the same subscription (// lines ignored).
        let text = SubscriptionTemplate.text(parsed, isNew: false, context: Self.context, error: nil)
        #expect(text.hasPrefix("// ckbrowse: subscription 's1' in the private database (development)."))
        #expect(text.contains("//   title STRING · QUERYABLE SEARCHABLE SORTABLE"), "the type's fields with their indexes")
        var back = try #require(try SubscriptionTemplate.parse(text, context: Self.context))
        #expect(back.zoneWide == true && back.firesOnce == false, "the defaults are written out, to be seen and changed")
        back.zoneWide = nil
        back.firesOnce = nil
        back.notificationInfo = nil
        #expect(back == parsed)
        #expect(try SubscriptionTemplate.parse("// only comments\n\n", context: Self.context) == nil, "an emptied file cancels")
    }

    @Test(arguments: [
        (#"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Artwork"}, "firesOn": ["create"], "fireOnce": true}"#,
         "the subscription has no key 'fireOnce'"),
        (#"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Artwork", "filterBy": [{"fieldName": "title", "comparator": "STARTS_WITH", "fieldValue": {"value": "A", "type": "STRING"}}]}, "firesOn": ["create"]}"#,
         "filterBy[0]: unknown comparator 'STARTS_WITH'"),
        (#"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Painting"}, "firesOn": ["create"]}"#,
         "record type 'Painting' is not in the schema"),
        (#"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Artwork", "filterBy": [{"fieldName": "colour", "comparator": "EQUALS", "fieldValue": {"value": "red", "type": "STRING"}}]}, "firesOn": ["create"]}"#,
         "filterBy[0]: Artwork has no field 'colour'"),
        (#"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Artwork", "filterBy": [{"fieldName": "year", "comparator": "EQUALS", "fieldValue": {"value": 1900, "type": "INT64"}}]}, "firesOn": ["create"]}"#,
         "not marked queryable"),
        (#"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Artwork"}}"#,
         "a query subscription needs firesOn"),
        (#"{"subscriptionID": "s1", "subscriptionType": "zone", "zoneID": {"zoneName": "Nowhere"}}"#,
         "zone 'Nowhere' does not exist in the private database"),
        (#"{"subscriptionID": "s1", "subscriptionType": "zone", "zoneID": {"zoneName": "Gallery"}, "firesOn": ["create"]}"#,
         "a zone subscription takes no query, firesOn or firesOnce"),
        (#"{"subscriptionID": "two words", "subscriptionType": "database"}"#,
         "subscriptionID 'two words' may hold"),
        (#"{"subscriptionID": "s1", "subscriptionType": "query", "query": {"recordType": "Artwork"}, "firesOn": ["create"],}"#,
         "invalid JSON at line 1"),
    ])
    func eachProblemIsNamed(json: String, reason: String) {
        let said = problem(json)
        #expect(said?.contains(reason) == true, "\(said ?? "accepted")")
    }

    @Test func whatADatabaseTakes() {
        let shared = SubscriptionTemplate.Context(database: .shared, environment: .development, schema: nil, zones: [])
        #expect(problem(Self.good, shared)?.contains("the shared database takes no query subscriptions") == true)
        let publicDB = SubscriptionTemplate.Context(database: .public, environment: .development, schema: nil, zones: [])
        #expect(problem(#"{"subscriptionID": "z", "subscriptionType": "zone", "zoneID": {"zoneName": "_defaultZone"}}"#, publicDB)?.contains("public database takes no zone") == true)
        // No schema known: types and fields are not judged.
        #expect(problem(Self.good.replacingOccurrences(of: "Artwork", with: "Painting"), publicDB) == nil)
    }

    /// CloudKit refuses a second query subscription on the same type and firesOn set (INTERNAL_ERROR
    /// "could not find subscription we just created"): said before it is sent, as a firesOn twice is.
    @Test func aTwinOfAnotherQuerySubscriptionIsRefusedBeforeItIsSent() throws {
        var context = Self.context
        context.others = [.query("artwork-changes", Query(recordType: "Artwork"), firesOn: [.update, .create])]
        let twin = problem(Self.good.replacingOccurrences(of: #"["create"]"#, with: #"["create", "update"]"#), context)
        #expect(twin?.contains("'artwork-changes' already watches Artwork on create, update") == true, "\(twin ?? "nil")")
        #expect(problem(Self.good, context) == nil, "another firesOn set is no twin")
        // Editing the subscription itself (its ID) is not a twin of itself.
        let same = Self.good.replacingOccurrences(of: "\"s1\"", with: "\"artwork-changes\"").replacingOccurrences(of: #"["create"]"#, with: #"["create", "update"]"#)
        #expect(problem(same, context) == nil)
        #expect(problem(Self.good.replacingOccurrences(of: #"["create"]"#, with: #"["create", "update", "update"]"#))?.contains("\"update\" twice") == true)
    }
}
