import CloudKitWeb
import RecordBrowser

/// The account of the in-process test server (container iCloud.t, no signed-in identity recorded).
func testAccount(_ environment: CloudKitEnvironment = .development) -> Account {
    Account(server: .url(normalizing: "http://in-process"), container: "iCloud.t", environment: environment, identity: .none)
}

func zoneKey(_ database: DatabaseScope, _ zoneID: ZoneID) -> ZoneKey {
    ZoneKey(scope: Scope(account: testAccount(), database: database), zoneID: zoneID)
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
