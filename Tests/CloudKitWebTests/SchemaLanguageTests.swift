import Foundation
import CloudKitWeb
import Testing

/// The CloudKit Schema Language: the reference's example files parse, the canonical form is written
/// as cktool exports it, a round trip keeps everything, and bad files fail at their line and column.
@Suite struct SchemaLanguageTests {
    /// Example A of `cloudkit-schema.md` §1.8: a custom role, every index, quoted names, comments.
    static let exampleA = """
        DEFINE SCHEMA
            // Moderators may edit any Recipe; everyone else edits only their own.
            CREATE ROLE Moderator;

            RECORD TYPE Recipe (
                "___createTime" TIMESTAMP QUERYABLE SORTABLE,
                "___recordID"   REFERENCE QUERYABLE,
                title           STRING QUERYABLE SEARCHABLE SORTABLE,
                servings        INT64 QUERYABLE SORTABLE,
                rating          DOUBLE SORTABLE,
                tags            LIST<STRING> QUERYABLE,
                author          REFERENCE QUERYABLE,
                photo           ASSET,
                kitchen         LOCATION QUERYABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world",
                GRANT READ, WRITE TO Moderator
            );

            RECORD TYPE "Comment" (
                "___recordID" REFERENCE QUERYABLE,
                recipe        REFERENCE QUERYABLE,
                body          STRING,
                -- a reserved word used as a field name must be quoted
                "sortable"    INT64,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_icloud"
            );
        """

    /// Example C: what the exporter prints for a just-in-time type (and Users), byte for byte.
    static let exampleC = """
        DEFINE SCHEMA

            RECORD TYPE Note (
                "___createTime" TIMESTAMP,
                "___createdBy"  REFERENCE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE,
                pinned          INT64 QUERYABLE SORTABLE,
                text            STRING QUERYABLE SEARCHABLE SORTABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
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

    @Test func theReferenceExamplesParse() throws {
        let a = try SchemaLanguage.parse(Self.exampleA)
        #expect(a.roles == ["Moderator"] && a.recordTypes.map(\.name) == ["Recipe", "Comment"])
        let recipe = try #require(a.recordType("Recipe"))
        #expect(recipe.field("title")?.indexes == [.queryable, .searchable, .sortable])
        #expect(recipe.field("tags")?.type == .list(.string) && recipe.field("photo")?.type == .primitive(.asset))
        #expect(recipe.grants.first { $0.role == "Moderator" }?.permissions == [.read, .write])
        #expect(a.recordType("Comment")?.field("sortable")?.type == .int64, "a quoted reserved word is a name")
        // Example B: encrypted fields, lists of assets, grants on one line.
        let b = try SchemaLanguage.parse("""
            DEFINE SCHEMA
                RECORD TYPE Journal (
                    "___modTime"  TIMESTAMP QUERYABLE SORTABLE,
                    createdOn     TIMESTAMP QUERYABLE SORTABLE,
                    title         ENCRYPTED STRING,
                    body          ENCRYPTED BYTES,
                    attachments   LIST<ASSET>,
                    count         NUMBER PREFERRED AS INT64,
                    GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world"
                );
            """)
        let journal = try #require(b.recordType("Journal"))
        #expect(journal.field("title")?.type == .encrypted(.string) && journal.field("attachments")?.type == .list(.primitive(.asset)))
        #expect(journal.field("count")?.type == .number(preferred: .int64) && journal.grants.count == 3)
    }

    @Test func theCanonicalFormIsWhatCktoolExports() throws {
        let c = try SchemaLanguage.parse(Self.exampleC)
        #expect(SchemaLanguage.write(c) == Self.exampleC)
        // Written from a model that lists no system field: all six are listed anyway.
        let jit = CloudKitSchema(recordTypes: [RecordTypeSchema(
            name: "Note", fields: [FieldSchema(name: "text", type: .string, indexes: SchemaFieldType.string.justInTimeIndexes),
                                   FieldSchema(name: "pinned", type: .int64, indexes: SchemaFieldType.int64.justInTimeIndexes)],
            grants: RecordTypeSchema.defaultGrants)])
        #expect(SchemaLanguage.write(jit).hasPrefix(Self.exampleC.components(separatedBy: "\n    RECORD TYPE Users")[0]))
    }

    @Test func aRoundTripKeepsEveryTypeIndexAndGrant() throws {
        let a = try SchemaLanguage.parse(Self.exampleA)
        let written = SchemaLanguage.write(a)
        let again = try SchemaLanguage.parse(written)
        #expect(SchemaLanguage.write(again) == written, "writing is stable")
        for type in a.recordTypes {
            let other = try #require(again.recordType(type.name))
            for field in type.fields { #expect(other.field(field.name) == field, "\(type.name).\(field.name)") }
            #expect(Set(other.grants) == Set(type.grants))
        }
        #expect(written.contains("    CREATE ROLE Moderator;") && written.contains("GRANT READ, WRITE TO Moderator") && written.contains("\"sortable\""))
    }

    @Test(arguments: [
        ("DEFINE SCHEMA RECORD TYPE A (x STRING,);", "line 1:39: a ',' before ')'"),
        ("DEFINE SCHEMA\n  RECORD TYPE A (x STRNG);", "line 2:20: expected a type (ASSET, BYTES, DOUBLE, INT64, LOCATION, REFERENCE, STRING, TIMESTAMP), found 'STRNG'"),
        ("DEFINE SCHEMA RECORD TYPE A (\"___recordID\" STRING);", "line 1:30: can't change type of system field ___recordID (it is REFERENCE)"),
        ("DEFINE SCHEMA RECORD TYPE A (n INT64 SEARCHABLE);", "line 1:30: SEARCHABLE is not allowed on n (INT64)"),
        ("DEFINE SCHEMA RECORD TYPE A (p ASSET QUERYABLE);", "line 1:30: QUERYABLE is not allowed on p (ASSET)"),
        ("DEFINE SCHEMA RECORD TYPE A (x STRING, x INT64);", "line 1:40: field x is defined twice in A"),
        ("DEFINE SCHEMA RECORD TYPE A (GRANT READ TO Editors);", "line 1:44: GRANT to Editors, a role neither built in nor created (CREATE ROLE Editors;)"),
        ("DEFINE SCHEMA RECORD TYPE A (sortable INT64);", "line 1:30: a field name 'sortable' is a reserved word: quote it (\"sortable\")"),
        ("DEFINE SCHEMA RECORD TYPE A (x STRING)", "line 1:39: expected ';', found the end of the file"),
        ("DEFINE SCHEMA /* never closed", "line 1:15: a /* comment is not closed"),
    ])
    func badFilesFailWhereTheProblemIs(_ text: String, _ expected: String) {
        #expect(throws: SchemaLanguage.ParseError.self) { try SchemaLanguage.parse(text) }
        do {
            _ = try SchemaLanguage.parse(text)
        } catch {
            #expect(error.description == expected)
        }
    }
}
