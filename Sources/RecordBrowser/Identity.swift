import CloudKitModels

/// Which server the browser talks to. A name alone is not an identity: the same container ID lives
/// on Apple's service, on a `ckbrowse serve` and in the embedded demo, so everything the browser keeps
/// or sends is keyed by the server too.
public enum ServerID: Sendable, Hashable, CustomStringConvertible {
    /// A CloudKit Web Services base URL, normalized (`ServerID.url(normalizing:)`).
    case url(String)
    /// The embedded demo, served in-process from this data directory: a server of its own.
    case embeddedDemo(dataDirectory: String)

    public static let appleDefault = ServerID.url(normalizing: "https://api.apple-cloudkit.com")

    /// Lower-case scheme and host, no default port, no trailing slash: `HTTPS://Host:443/` and
    /// `https://host` are one server.
    public static func url(normalizing text: String) -> ServerID {
        var rest = Substring(text.trimmingCharacters(in: " \t"))
        var scheme = "https"
        if let r = rest.firstRange(of: "://") {
            scheme = rest[..<r.lowerBound].lowercased()
            rest = rest[r.upperBound...]
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd].lowercased()
        var path = String(rest[authorityEnd...])
        if let q = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<q]) }
        while path.hasSuffix("/") { path.removeLast() }
        let defaultPort = scheme == "https" ? ":443" : (scheme == "http" ? ":80" : nil)
        if let defaultPort, authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
        return .url("\(scheme)://\(authority)\(path)")
    }

    public var isAppleDefault: Bool { self == Self.appleDefault }

    /// What the status bar and the batch screen call it.
    public var displayName: String {
        switch self {
        case .embeddedDemo: return "local demo"
        case .url(let url):
            guard let r = url.firstRange(of: "://") else { return url }
            return String(url[r.upperBound...])
        }
    }

    /// The text that identifies it in file names' hashes and journal entries.
    public var description: String {
        switch self {
        case .url(let url): return url
        case .embeddedDemo(let directory): return "embedded-demo:" + directory
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

/// Who the requests are made as.
public enum SignedInIdentity: Sendable, Hashable, CustomStringConvertible {
    /// An API token alone: no user (the public database, as an anonymous caller).
    case none
    /// A web auth token, identified by the user record name `users/current` answered (never by the
    /// token, which rotates on every answer).
    case user(recordName: String)
    /// A server-to-server key, identified by its key ID.
    case serverKey(keyID: String)

    /// The user record name of a signed-in user.
    public var userRecordName: String? {
        if case .user(let name) = self { return name }
        return nil
    }

    /// How a person reads it.
    public var displayName: String {
        switch self {
        case .none: return "no signed-in user"
        case .user(let name): return "user \(name)"
        case .serverKey(let id): return "server-to-server key \(id.prefix(12))…"
        }
    }

    public var description: String {
        switch self {
        case .none: return "none"
        case .user(let name): return "user:" + name
        case .serverKey(let id): return "key:" + id
        }
    }
}

/// Server + container + environment + signed-in identity: what one cache file and one journal file
/// belong to.
public struct Account: Sendable, Hashable, CustomStringConvertible {
    public var server: ServerID
    public var container: String
    public var environment: CloudKitEnvironment
    public var identity: SignedInIdentity

    public init(server: ServerID, container: String, environment: CloudKitEnvironment, identity: SignedInIdentity) {
        self.server = server
        self.container = container
        self.environment = environment
        self.identity = identity
    }

    /// Stable text naming the account (hashed into file names, stored in the files to check them).
    public var description: String {
        ["v2", server.description, container, environment.rawValue, identity.description].joined(separator: "\u{1F}")
    }
}

/// An account and one of its databases.
public struct Scope: Sendable, Hashable {
    public var account: Account
    public var database: DatabaseScope

    public init(account: Account, database: DatabaseScope) {
        self.account = account
        self.database = database
    }
}

/// A zone: scope + zone owner + zone name. Two owners can each share a zone called `Notes` into the
/// shared database; they are two zones.
public struct ZoneKey: Sendable, Hashable, CustomStringConvertible {
    public var scope: Scope
    /// The owner's user record name; empty for "the caller" (every zone of the private database, and
    /// the public database's default zone, belong to the caller or to nobody in particular).
    public var owner: String
    public var zoneName: String

    /// The key of a zone as the server named it. Outside the shared database the owner is always the
    /// caller, whether or not the server spelled it out, so it is normalized away; in the shared
    /// database it is what tells zones apart.
    public init(scope: Scope, zoneID: ZoneID) {
        self.scope = scope
        self.zoneName = zoneID.zoneName
        self.owner = scope.database == .shared ? (zoneID.ownerRecordName ?? "") : ""
    }

    public init(scope: Scope, owner: String, zoneName: String) {
        self.scope = scope
        self.owner = owner
        self.zoneName = zoneName
    }

    public var database: DatabaseScope { scope.database }

    /// The zone ID to send: with the owner where it matters (the shared database).
    public var zoneID: ZoneID { ZoneID(zoneName: zoneName, ownerRecordName: owner.isEmpty ? nil : owner) }

    /// `database/owner/zone` (the account is the file's): the zone's key inside the cache and journal.
    public var description: String { [database.rawValue, owner, zoneName].joined(separator: "\u{1F}") }

    /// How a person reads it: `Notes` or, in the shared database, `Notes (owner _abc…)`.
    public var displayName: String { owner.isEmpty ? zoneName : "\(zoneName) (owner \(owner))" }
}

/// A record: zone + record name.
public struct RecordKey: Sendable, Hashable, CustomStringConvertible {
    public var zone: ZoneKey
    public var recordName: String

    public init(zone: ZoneKey, recordName: String) {
        self.zone = zone
        self.recordName = recordName
    }

    public var description: String { zone.description + "\u{1F}" + recordName }
}
