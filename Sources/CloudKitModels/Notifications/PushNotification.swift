#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A CloudKit push as a web client receives it from the webcourier long-poll: the APNs payload's
/// `aps` (the alert) and `ck` (CloudKit's short keys; `cloudkit-notifications.md` §3.3), mapped to
/// names as CloudKit JS shows them (§4.4).
public struct PushNotification: Sendable, Hashable {
    /// `qry` → query, `fet` → recordZone, `met` → database; a payload with none of them is `unknown`.
    public enum Kind: String, Sendable, Hashable { case query, recordZone, database, unknown }

    /// `ck.qry.fo`: 1 created, 2 updated, 3 deleted (CKQueryNotificationReason).
    public enum Reason: Int, Sendable, Hashable {
        case recordCreated = 1, recordUpdated = 2, recordDeleted = 3

        public var word: String {
            switch self {
            case .recordCreated: return "created"
            case .recordUpdated: return "updated"
            case .recordDeleted: return "deleted"
            }
        }
    }

    /// How a payload's `dbs` numbers the databases. Apple's own web client reads `dbs === 0` as the
    /// public database (CloudKit JS 1.x–2.6.4); `ckbrowse serve` before issue 29 sent the native
    /// `CKDatabaseScope` values. The two disagree on 1 and 2, so `dbs` is read by where the push came
    /// from (`init(payload:from:)`), never by guessing:
    public enum DatabaseNumbering: String, Sendable, Hashable {
        /// `ck.ckbrowse` present: `ckbrowse serve` since issue 29, 0 public, 1 private, 2 shared.
        case ckbrowse
        /// Apple's service, as CloudKit JS reads it: 0 public, anything else not public. Which value
        /// is private and which shared is unconfirmed, so a query or zone push (the shared database
        /// fires neither) is private and a database push's scope stays unknown.
        case apple
        /// An unmarked push from a server other than Apple's: a `ckbrowse serve` from before issue 29,
        /// 1 public, 2 private, 3 shared (0, which those never sent, is public as CloudKit JS reads it).
        case native
    }

    /// Where a push was long-polled from.
    public enum Origin: Sendable, Hashable {
        /// `https://api.apple-cloudkit.com`'s webcourier.
        case appleService
        /// Any other server (a local `ckbrowse serve`).
        case otherServer
    }

    /// The value of `ck.ckbrowse` in pushes from `ckbrowse serve`: its `dbs` follows `DatabaseNumbering.ckbrowse`.
    public static let ckbrowseMarker: Int64 = 1

    public var kind: Kind
    public var notificationID: String?
    public var containerIdentifier: String?
    public var subscriptionID: String?
    /// The database `dbs` names, read by `databaseNumbering`; nil when the push does not say for certain.
    public var database: DatabaseScope?
    /// `dbs` as sent.
    public var databaseCode: Int64?
    public var databaseNumbering: DatabaseNumbering
    public var zoneName: String?
    public var zoneOwner: String?
    public var recordName: String?
    public var reason: Reason?
    /// `af`: the subscription's desired keys with their values (plain JSON, not `{value, type}`).
    public var recordFields: JSONObject?
    /// `ck.p`: the server removed data to fit the size limit.
    public var isPruned: Bool
    /// `ck.ce` (meaning unconfirmed; 1 development, 2 production on the local server).
    public var environmentCode: Int64?
    public var alertBody: String?
    public var alertLocalizationKey: String?
    public var alertLocalizationArgs: [String]?
    public var badge: Int64?
    public var soundName: String?
    public var category: String?
    public var contentAvailable: Bool
    /// The payload as received.
    public var payload: JSON

    /// Parses a payload; throws when it is not a JSON object. `origin` decides how an unmarked `dbs`
    /// is read (see `DatabaseNumbering`).
    public init(payload: JSON, from origin: Origin = .otherServer) throws {
        guard case .object(let root) = payload else { throw JSONDecodingError(message: "a push payload is a JSON object, not \(payload.kindName)") }
        self.payload = payload
        let ck = root["ck"].flatMap { if case .object(let o) = $0 { return o } else { return nil } } ?? JSONObject()
        let aps = root["aps"].flatMap { if case .object(let o) = $0 { return o } else { return nil } } ?? JSONObject()
        func object(_ key: String) -> JSONObject? { if case .object(let o)? = ck[key] { return o } else { return nil } }
        let detail: JSONObject?
        if let q = object("qry") { kind = .query; detail = q } else if let f = object("fet") { kind = .recordZone; detail = f } else if let m = object("met") {
            kind = .database; detail = m
        } else { kind = .unknown; detail = nil }
        notificationID = ck["nid"]?.stringValue
        containerIdentifier = ck["cid"]?.stringValue
        isPruned = ck["p"] != nil
        environmentCode = ck["ce"]?.int64Value
        subscriptionID = detail?["sid"]?.stringValue
        let numbering: DatabaseNumbering = ck["ckbrowse"] != nil ? .ckbrowse : (origin == .appleService ? .apple : .native)
        let code = detail?["dbs"]?.int64Value
        databaseNumbering = numbering
        databaseCode = code
        database = code.flatMap { [kind] in Self.database($0, numbering: numbering, kind: kind) }
        zoneName = detail?["zid"]?.stringValue
        zoneOwner = detail?["zoid"]?.stringValue
        recordName = detail?["rid"]?.stringValue
        reason = detail?["fo"]?.int64Value.flatMap { Reason(rawValue: Int($0)) }
        if case .object(let af)? = detail?["af"] { recordFields = af }
        if case .object(let alert)? = aps["alert"] {
            alertBody = alert["body"]?.stringValue
            alertLocalizationKey = alert["loc-key"]?.stringValue
            if case .array(let args)? = alert["loc-args"] { alertLocalizationArgs = args.map { $0.stringValue ?? $0.text } }
        } else {
            alertBody = aps["alert"]?.stringValue
        }
        badge = aps["badge"]?.int64Value
        soundName = aps["sound"]?.stringValue
        category = aps["category"]?.stringValue
        contentAvailable = aps["content-available"]?.int64Value == 1
    }
}

extension PushNotification {
    /// The database a `dbs` value names under a numbering, or nil when it does not say for certain.
    public static func database(_ code: Int64, numbering: DatabaseNumbering, kind: Kind) -> DatabaseScope? {
        switch (numbering, code) {
        case (_, 0): return .public
        case (.ckbrowse, 1): return .private
        case (.ckbrowse, 2): return .shared
        case (.apple, _): return kind == .query || kind == .recordZone ? .private : nil
        case (.native, 1): return .public
        case (.native, 2): return .private
        case (.native, 3): return .shared
        default: return nil
        }
    }
}

extension JSON {
    /// An integer value (a whole double counts too).
    var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 9e15: return Int64(d)
        default: return nil
        }
    }
}

/// One answer of the webcourier long-poll.
public struct WebcourierAnswer: Sendable, Hashable {
    /// nil: a keep-alive (an empty or non-JSON 2xx body).
    public var notification: PushNotification?
    /// Notifications the local server dropped from a full queue since the last poll (its own header;
    /// Apple's service does not say).
    public var dropped: Int

    public init(notification: PushNotification?, dropped: Int) {
        self.notification = notification
        self.dropped = dropped
    }
}
