import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing

/// Issue 32: every field of every record of the demo container goes through the inline editor's text
/// and the `$EDITOR` form untouched and comes back identical.
@Suite struct DemoRoundTripTests {
    @Test func everyDemoFieldRoundTripsThroughBothEditors() async throws {
        var configuration = LocalServerConfiguration()
        DemoSeed.configure(&configuration)
        let service = try LocalCloudKit(store: try Store(directory: tempDirectory("srv-demo")), configuration: configuration)
        try await DemoSeed.seedIfNeeded(service)
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: DemoSeed.container),
            credentials: .apiToken(DemoSeed.apiToken, webAuthToken: DemoSeed.webAuthToken), transport: InProcessTransport(service: service))
        let db = client.database(.private)
        var types: Set<FieldType> = []
        var records = 0
        for zone in try await db.listZones().compactMap(\.zone) where zone.zoneID.zoneName != ZoneID.defaultZoneName {
            var token: String?
            repeat {
                let page = try await db.recordChanges(RecordChangesRequest(zoneID: zone.zoneID, syncToken: token))
                for record in page.records.compactMap(\.record) {
                    records += 1
                    // $EDITOR: the file as written, saved untouched, is no change.
                    let text = FieldsJSON.text(record: record, operation: nil, error: nil)
                    #expect(try FieldsJSON.changes(from: text, base: record.fields) == [:], "\(record.recordName)")
                    for (name, value) in record.fields {
                        types.insert(value.type)
                        guard FieldInput.isEditable(value.type) else { continue }
                        // The inline editor: the whole value's text, and each element's.
                        let parsed = FieldInput.parse(FieldInput.text(of: value), as: value.type, original: value)
                        #expect((try? parsed.get()) == value, "\(record.recordName).\(name): \(FieldInput.text(of: value))")
                        for element in value.listElements {
                            #expect((try? FieldInput.parse(FieldInput.text(of: element), as: element.type, original: element).get()) == element,
                                    "\(record.recordName).\(name): \(FieldInput.text(of: element))")
                        }
                    }
                }
                token = page.moreComing ? page.syncToken : nil
            } while token != nil
        }
        #expect(records > 100)
        // The demo's field types, all of them seen (so a type added to the demo is covered too).
        #expect(types.isSuperset(of: [.string, .int64, .double, .timestamp, .reference, .assetID, .location, .stringList, .referenceList, .locationList]), "\(types)")
    }
}
