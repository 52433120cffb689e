import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

/// Issue 32, "queries people write": several filters joined by `and`, `sort`, Tab for each part, and
/// the `:` line's history on ↑/↓, kept per account.
@Suite(.serialized) struct QueryWritingTests {
    func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }

    @Test func filtersJoinedByAndAndASort() throws {
        let q = try Browser.parseQuery(words("Artwork year LESS_THAN 1900 and city EQUALS Paris sort year desc"))
        #expect(q.recordType == "Artwork")
        #expect(q.filterBy == [Filter("year", .lessThan, .int64(1900)), Filter("city", .equals, .string("Paris"))])
        #expect(q.sortBy == [SortDescriptor("year", ascending: false)])
        // Values of several words, quoted values (keeping `and`), several sort fields, system fields.
        let q2 = try Browser.parseQuery(words(#"Artwork title EQUALS Great Wave and notes EQUALS "Tom and Jerry" sort year, title asc"#))
        #expect(q2.filterBy == [Filter("title", .equals, .string("Great Wave")), Filter("notes", .equals, .string("Tom and Jerry"))])
        #expect(q2.sortBy == [SortDescriptor("year"), SortDescriptor("title")])
        #expect(try Browser.parseQuery(words(#"Artwork code EQUALS "1900""#)).filterBy == [Filter("code", .equals, .string("1900"))], "quoted: a string")
        #expect(try Browser.parseQuery(words("Artwork sort modifiedTimestamp desc")).sortBy == [SortDescriptor(system: .modifiedTimestamp, ascending: false)])
        #expect(try Browser.parseQuery(words("Artwork sort title")).filterBy == nil)
        // The older form (filters one after another) still parses.
        #expect(try Browser.parseQuery(words("Artwork year LESS_THAN 1900 city EQUALS Paris")).filterBy?.count == 2)
        // Mistakes are said.
        #expect(throws: BrowserFailure.self) { try Browser.parseQuery(words("Artwork and year LESS_THAN 1900")) }
        #expect(throws: BrowserFailure.self) { try Browser.parseQuery(words("Artwork year LESS_THAN 1900 sort year sideways")) }
        #expect(throws: BrowserFailure.self) { try Browser.parseQuery(words("Artwork year LESS_THAN 1900 and")) }
        #expect(throws: BrowserFailure.self) { try Browser.parseQuery(words("Artwork sort")) }
    }

    func complete(_ text: String) -> (String?, [String], String) {
        let (completion, why) = Completing.command(text, schema: SchemaScreenTests.known())
        return (completion?.text, completion?.candidates ?? [], why)
    }

    @Test func tabCompletesEachPart() {
        let afterValue = complete("query Artwork year GREATER_THAN 1900 ").1
        #expect(afterValue.contains("and") && afterValue.contains("sort") && afterValue.contains("title"), "\(afterValue)")
        #expect(complete("query Artwork year GREATER_THAN 1900 a").0 == "query Artwork year GREATER_THAN 1900 and ")
        #expect(complete("query Artwork year GREATER_THAN 1900 and t").0 == "query Artwork year GREATER_THAN 1900 and title ")
        #expect(complete("query Artwork year GREATER_THAN 1900 and title ").1.contains("EQUALS"))
        #expect(!complete("query Artwork year GREATER_THAN 1900 and title ").1.isEmpty)
        #expect(complete("query Artwork year GREATER_THAN 1900 so").0 == "query Artwork year GREATER_THAN 1900 sort ")
        // sort offers the SORTABLE fields only.
        #expect(complete("query Artwork year GREATER_THAN 1900 sort ").1.contains("title") && complete("query Artwork year GREATER_THAN 1900 sort ").1.contains("year"))
        #expect(!complete("query Artwork year GREATER_THAN 1900 sort ").1.contains("image"))
        #expect(complete("query Artwork sort y").0 == "query Artwork sort year ")
        #expect(complete("query Artwork sort year d").0 == "query Artwork sort year desc ")
        #expect(complete("query Artwork year GREATER_THAN ").2.contains("type the value"))
    }

    /// A system field goes by its schema name too (`___recordID`), as a filter and a sort; an unknown
    /// comparator's refusal lists what the field takes once the schema is known (all 21 were listed).
    @Test func systemFieldsBySchemaNameAndComparatorsTheFieldTakes() throws {
        let query = try Browser.parseQuery(["Artwork", "___recordID", "EQUALS", "a1", "sort", "___createTime", "desc"])
        #expect(query.filterBy == [Filter(system: .recordName, .equals, .reference(Reference(recordName: "a1", action: nil)))])
        #expect(query.sortBy == [SortDescriptor(system: .createdTimestamp, ascending: false)])
        do {
            _ = try Browser.parseQuery(["Artwork", "year", "FOO", "3"], schema: SchemaScreenTests.known())
            Issue.record("FOO is no comparator")
        } catch let error as BrowserFailure {
            #expect(error.message == "unknown comparator 'FOO'; year takes LESS_THAN, LESS_THAN_OR_EQUALS, GREATER_THAN, GREATER_THAN_OR_EQUALS", "\(error.message)")
        }
    }

    /// `:db`, `:sort`, `:set` and `:columns` complete their arguments too (a new user's Tab answered
    /// "nothing to complete here"); `:sort` refuses a field no type on screen has.
    @Test func tabCompletesTheOtherCommandsArguments() {
        #expect(complete("db p").1 == ["public", "private"])
        #expect(complete("db sh").0 == "db shared ")
        let (sorted, _) = Completing.command("sort ye", schema: SchemaScreenTests.known(), listTypes: ["Artwork"])
        #expect(sorted?.text == "sort year ")
        #expect(complete("sort year d").0 == "sort year desc ")
        #expect(complete("set ti").0 == "set title ")
        #expect(complete("columns year ti").0 == "columns year title ")
        #expect(complete("set title ").2.contains("type the value"))
        var h = Harness()
        h.send(.schemaLoaded(.success(SchemaScreenTests.known())))
        h.openDetail()
        h.keys(.escape)
        h.type(":sort nosuch")
        h.keys(.enter)
        #expect(h.state.input?.refusal == .noSuchField("nosuch", types: ["Artwork"]), "\(String(describing: h.state.input?.refusal))")
    }

    @Test func theCommandLineRecallsEarlierLinesOnUpAndDown() {
        var h = Harness()
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.send(.historyRestored(["query Artist", "db public"]))
        h.type(":query Artwork sort year")
        h.keys(.enter)
        #expect(h.state.session.commandHistory == ["query Artist", "db public", "query Artwork sort year"])
        h.keys(.escape)
        h.type(":")
        h.keys(.up)
        #expect(h.state.input?.text == "query Artwork sort year")
        h.keys(.up)
        #expect(h.state.input?.text == "db public")
        h.keys(.up, .up)
        #expect(h.state.input?.text == "query Artist", "the oldest stays")
        h.keys(.down, .down)
        #expect(h.state.input?.text == "query Artwork sort year")
        h.keys(.down)
        #expect(h.state.input?.text == "", "past the newest: the line as typed")
        // What was typed first narrows the recall.
        h.type("query")
        h.keys(.up)
        #expect(h.state.input?.text == "query Artwork sort year")
        h.keys(.up)
        #expect(h.state.input?.text == "query Artist")
        h.keys(.escape)
        // Running an older line again makes it the newest, once.
        h.type(":db public")
        h.keys(.enter)
        #expect(h.state.session.commandHistory == ["query Artist", "query Artwork sort year", "db public"])
    }
}
