import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// The schema in the browser: the schema screen, Tab completion of `:query` (types, fields, the
/// comparators a field's indexes allow), the question before a query CloudKit would refuse, and the
/// schema's fields and types offered when adding a field.
extension CellGrid {
    /// Every row, joined by newlines.
    var allText: String { (0..<height).map(line).joined(separator: "\n") }
}

@Suite struct SchemaScreenTests {
    static let text = """
        DEFINE SCHEMA
            RECORD TYPE Artwork (
                "___recordID" REFERENCE QUERYABLE,
                image ASSET,
                title STRING QUERYABLE SEARCHABLE SORTABLE,
                year INT64 SORTABLE,
                GRANT WRITE TO "_creator", GRANT READ TO "_world"
            );
            RECORD TYPE Artist ( name STRING QUERYABLE );
        """

    static func known(_ origin: KnownSchema.Origin = .server) -> KnownSchema {
        KnownSchema(schema: try! SchemaLanguage.parse(text), origin: origin, environment: .production, counts: ["Artwork": 2061])
    }

    func loaded(_ origin: KnownSchema.Origin = .server) -> Harness {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        #expect(h.effects.contains(.loadSchema), "the schema is asked for once the zones are in")
        h.send(.schemaLoaded(.success(Self.known(origin))))
        return h
    }

    func complete(_ text: String, _ known: KnownSchema? = SchemaScreenTests.known()) -> (String?, [String], String) {
        let (completion, why) = Completing.command(text, schema: known)
        return (completion?.text, completion?.candidates ?? [], why)
    }

    @Test func tabCompletesCommandsTypesFieldsAndIndexedComparators() {
        #expect(complete("sch").0 == "schema ")
        #expect(complete("query Art").0 == "query Art" && complete("query Art").1 == ["Artwork", "Artist"])
        #expect(complete("query Artw").0 == "query Artwork ")
        #expect(complete("query Artwork t").0 == "query Artwork title ")
        #expect(complete("query Artwork re").0 == "query Artwork recordName ", "system fields by their query names")
        // Only what the field's indexes allow: year is SORTABLE, not QUERYABLE.
        #expect(complete("query Artwork year ").1 == ["LESS_THAN", "LESS_THAN_OR_EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUALS"])
        #expect(complete("query Artwork title CONT").1 == ["CONTAINS_ALL_TOKENS", "CONTAINS_ANY_TOKENS"])
        #expect(complete("query Artwork recordName ").1 == ["EQUALS", "NOT_EQUALS", "IN", "NOT_IN"])
        #expect(complete("query Artwork image ").2 == "image (ASSET) has no index a filter can use in production")
        #expect(complete("query Artwork createdTimestamp ").2.contains("no index"), "an unindexed system field")
        // The second filter completes like the first.
        #expect(complete("query Artwork year GREATER_THAN 1900 ti").0 == "query Artwork year GREATER_THAN 1900 title ")
        // An inferred schema knows no indexes: every comparator of the type is offered.
        #expect(complete("query Artwork year ", Self.known(.inferred)).1.contains("EQUALS"))
        #expect(complete("query Art", nil).2 == "the schema is not loaded yet (:schema loads it)")
    }

    @Test func tabInTheCommandLineShowsTheCandidatesAboveIt() {
        var h = loaded()
        h.type(":query Artwork year ")
        h.keys(.tab)
        #expect(h.inputNote == "LESS_THAN  LESS_THAN_OR_EQUALS  GREATER_THAN  GREATER_THAN_OR_EQUALS")
        #expect(h.screen.line(21).contains("LESS_THAN  LESS_THAN_OR_EQUALS"), "\(h.screen.line(21))")
        h.type("G")
        #expect(h.inputNote == nil, "an edit clears the candidates")
        h.keys(.tab)
        #expect(h.state.input?.text == "query Artwork year GREATER_THAN")
    }

    @Test func aQueryTheSchemaSaysCloudKitRefusesIsQuestioned() {
        var h = loaded()
        h.type(":query Artwork year EQUALS 1900")
        h.keys(.enter)
        if case .refusedQuery(let text, _, let reason)? = h.state.confirmation {
            #expect(text == "query Artwork year EQUALS 1900")
            #expect(reason == "Field 'year' is not marked queryable in production (schema from the server)")
        } else {
            Issue.record("not questioned: \(String(describing: h.state.confirmation))")
        }
        #expect(!h.effects.contains { if case .runQuery = $0 { return true } else { return false } }, "nothing is sent yet")
        #expect(h.screen.allText.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("CloudKit will refuse this query: Field 'year' is not marked queryable in production"))
        // Any other key: the line comes back to be fixed.
        h.keys(.char("n"))
        #expect(h.state.input?.text == "query Artwork year EQUALS 1900")
        h.keys(.enter)
        h.keys(.char("y"))
        #expect(h.effects.contains { if case .runQuery(let request, _, _, _) = $0 { return request.query.recordType == "Artwork" } else { return false } }, "y sends it as typed")
        // A query the indexes allow goes at once; an inferred schema never questions.
        var ok = loaded()
        ok.type(":query Artwork title EQUALS Waves")
        ok.keys(.enter)
        #expect(ok.state.confirmation == nil)
        var inferred = loaded(.inferred)
        inferred.type(":query Artwork year EQUALS 1900")
        inferred.keys(.enter)
        #expect(inferred.state.confirmation == nil)
        var unknown = loaded()
        unknown.type(":query Sculpture")
        unknown.keys(.enter)
        if case .refusedQuery(_, _, let reason)? = unknown.state.confirmation { #expect(reason.hasPrefix("Did not find record type: Sculpture")) } else { Issue.record("not questioned") }
        // A value of another kind than its field: the server refuses it (`FilterTypes`), so it is
        // questioned before it is sent; quoted, the same digits are text and go at once.
        var mismatched = loaded()
        mismatched.type(":query Artwork title EQUALS 1900")
        mismatched.keys(.enter)
        if case .refusedQuery(_, _, let reason)? = mismatched.state.confirmation {
            #expect(reason == "Field 'title' is STRING: EQUALS cannot compare it with a value of type INT64 (schema from the server)")
        } else {
            Issue.record("not questioned: \(String(describing: mismatched.state.confirmation))")
        }
        var quoted = loaded()
        quoted.type(":query Artwork title EQUALS \"1900\"")
        quoted.keys(.enter)
        #expect(quoted.state.confirmation == nil)
    }

    @Test func developmentQueriesAreJudgedByProductionToo() {
        var h = Harness()
        var known = Self.known()
        known.environment = .development
        // Development indexes year for equality (just in time); production was deployed without it.
        known.schema.recordTypes[0].fields[3].indexes = [.queryable, .sortable]
        known.production = try! SchemaLanguage.parse(Self.text)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.send(.schemaLoaded(.success(known)))
        h.type(":query Artwork year EQUALS 1900")
        h.keys(.enter)
        #expect(h.state.confirmation == nil, "development runs it")
        #expect(h.effects.contains { if case .runQuery = $0 { return true } else { return false } })
        #expect(h.state.message == "this query works in development, but CloudKit will refuse it in production: Field 'year' is not marked queryable (deploy an index for it)")
        // A type production does not have yet is not pointed out.
        known.schema.recordTypes.append(RecordTypeSchema(name: "Draft", fields: [FieldSchema(name: "___recordID", type: .reference, indexes: [.queryable])]))
        h.send(.schemaLoaded(.success(known)))
        h.type(":query Draft")
        h.keys(.enter)
        #expect(h.state.message == nil)
    }

    @Test func theSchemaScreenListsTypesFieldsIndexesAndGrants() throws {
        var h = loaded()
        h.type(":schema")
        h.keys(.enter)
        #expect(h.state.pane == .schema)
        let text = h.screen.allText
        #expect(text.contains("Schema (development · from the server)"))
        #expect(h.screen.line(2).contains("Artist"), "types by name")
        #expect(text.contains("Artwork") && text.contains("2,061 cached"))
        #expect(text.contains("year") && text.contains("SORTABLE"))
        #expect(text.contains("image") && text.contains("none"))
        #expect(text.contains("WRITE _creator · READ _world"))
        #expect(text.contains("none (unusable in the public database)"), "Artist has no grants")
        try assertSnapshot(h.screen, "schema-80x24")
        // Enter on a field starts a filter on it, with its comparators offered.
        let rows = Browser.schemaRows(h.state)
        let year = try #require(rows.firstIndex { $0.field == "year" })
        while h.state.position(.schema).selection < year { h.keys(.char("j")) }
        h.keys(.enter)
        #expect(h.state.input?.text == "query Artwork year ")
        #expect(h.inputNote == "comparators: LESS_THAN LESS_THAN_OR_EQUALS GREATER_THAN GREATER_THAN_OR_EQUALS")
    }

    @Test func addingAFieldOffersTheSchemasFieldsAndTypes() {
        var h = Harness()
        h.send(.schemaLoaded(.success(Self.known())))
        h.openDetail(Record(recordName: "a1", recordType: "Artwork", recordChangeTag: "t", fields: ["title": .string("Waves")]))
        h.keys(.char("a"))
        h.keys(.tab)
        #expect(h.inputNote == "image  year", "the fields not set yet")
        h.type("y")
        h.keys(.tab)
        #expect(h.state.input?.text == "year INT64", "one field: its type follows")
        // A name alone takes the schema's type; a contradicting type is refused, naming the schema's.
        h.keys(.escape)
        h.keys(.char("a"))
        h.type("year")
        h.keys(.enter)
        #expect(h.state.editor?.field == "year" && h.state.editor?.type == .int64)
        h.keys(.escape)
        h.keys(.char("a"))
        h.type("year STRING")
        h.keys(.enter)
        #expect(h.state.editor == nil)
        #expect(h.inputNote == "'year' is INT64 in the schema (from the server): add it as year INT64" && h.state.input?.text == "year STRING")
    }
}
