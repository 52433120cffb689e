import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

/// The schema the local server holds, exported as a .ckdb file: what just-in-time creation made.
@Suite struct SchemaExportTests {
    @Test func theDemoExportsAValidSchemaThatRoundTrips() async throws {
        var configuration = LocalServerConfiguration()
        DemoSeed.configure(&configuration)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ckl-schema-\(UUID().uuidString)").path
        let service = try LocalCloudKit(store: try Store(directory: directory), configuration: configuration)
        try await DemoSeed.seedIfNeeded(service)
        let schema = try service.schema(container: DemoSeed.container, environment: .development)
        #expect(schema.recordTypes.map(\.name) == ["Artist", "Artwork", "Exhibition", "Note", "Users"], "no system share type")
        let artwork = try #require(schema.recordType("Artwork"))
        #expect(artwork.field("title") == FieldSchema(name: "title", type: .string, indexes: [.queryable, .searchable, .sortable]))
        #expect(artwork.field("photos")?.type == .list(.primitive(.asset)) && artwork.field("photos")?.indexes == [])
        #expect(artwork.grants == RecordTypeSchema.defaultGrants)
        let text = SchemaLanguage.write(schema)
        let parsed = try SchemaLanguage.parse(text)
        #expect(SchemaLanguage.write(parsed) == text)
        #expect(text.contains("        year            INT64 QUERYABLE SORTABLE,"))
        // Another container has no types of its own: only Users.
        #expect(try service.schema(container: "iCloud.other", environment: .development).recordTypes.map(\.name) == ["Users"])
    }
}
