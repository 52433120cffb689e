import CloudKitWeb
@testable import RecordBrowser

/// The account the harness browses: Apple's server (so the status bar shows no server name), the
/// demo container, no signed-in user.
func testAccount(_ environment: CloudKitEnvironment = .development) -> Account {
    Account(server: .appleDefault, container: "iCloud.com.example.Gallery", environment: environment, identity: .none)
}

/// The key of a zone of the test account.
func zoneKey(_ database: DatabaseScope, _ zoneID: ZoneID, _ environment: CloudKitEnvironment = .development) -> ZoneKey {
    ZoneKey(scope: Scope(account: testAccount(environment), database: database), zoneID: zoneID)
}

func recordKey(_ database: DatabaseScope, _ zoneID: ZoneID, _ name: String) -> RecordKey {
    RecordKey(zone: zoneKey(database, zoneID), recordName: name)
}

extension StagedOperation {
    /// An operation of the test account.
    init(kind: Kind, database: DatabaseScope, zoneID: ZoneID, base: Record, changes: [String: FieldValue] = [:]) {
        self.init(kind: kind, zone: zoneKey(database, zoneID), base: base, changes: changes)
    }
}

extension CommitPlan.Request {
    init(database: DatabaseScope, body: ModifyRecordsRequest) {
        self.init(zone: zoneKey(database, body.zoneID ?? .default), body: body)
    }
}

extension Browser {
    /// The commit screen's text, without tones.
    static func previewText(_ state: BrowserState) -> [String] { previewLines(state).map(\.text) }
}
