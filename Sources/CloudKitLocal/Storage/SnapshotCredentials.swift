import SQLiteDB

/// The credentials a snapshot carries, when asked to (`serve --export-credentials`, `--import-credentials`):
/// API tokens, users and server-to-server keys in the snapshot's own tables, and the secret that
/// signs this server's tokens and asset URLs (so minted tokens keep working after the import).
public struct SnapshotCredentials: Sendable {
    public var apiTokens: [(token: String, container: String?)] = []
    public var users: [(name: String, token: String)] = []
    public var serverKeys: [(keyID: String, publicKeyPEM: String, container: String?)] = []
    public var tokenSecret: String?

    public init() {}

    init(_ db: Database) throws {
        if try db.tableExists("api_token") {
            apiTokens = try Row.fetchAll(db, sql: "SELECT token, container FROM api_token").map { (token: $0["token"], container: $0["container"]) }
        }
        if try db.tableExists("web_user") {
            users = try Row.fetchAll(db, sql: "SELECT name, token FROM web_user").map { (name: $0["name"], token: $0["token"]) }
        }
        if try db.tableExists("server_key") {
            let hasContainer = try db.columns(in: "server_key").contains { $0.name == "container" }
            serverKeys = try Row.fetchAll(db, sql: "SELECT key_id, public_key_pem\(hasContainer ? ", container" : ", NULL AS container") FROM server_key").map {
                (keyID: $0["key_id"], publicKeyPEM: $0["public_key_pem"], container: $0["container"])
            }
        }
        if try db.tableExists("setting") {
            tokenSecret = try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = 'token-secret'")
        }
    }

    /// Writes them into a snapshot's (emptied) tables.
    func write(_ db: Database) throws {
        for token in apiTokens {
            try db.execute(sql: "INSERT OR REPLACE INTO api_token (token, container) VALUES (?, ?)", arguments: [token.token, token.container])
        }
        for user in users {
            try db.execute(sql: "INSERT OR REPLACE INTO web_user (token, name) VALUES (?, ?)", arguments: [user.token, user.name])
        }
        for key in serverKeys {
            try db.execute(
                sql: "INSERT OR REPLACE INTO server_key (key_id, public_key_pem, container) VALUES (?, ?, ?)", arguments: [key.keyID, key.publicKeyPEM, key.container])
        }
        if tokenSecret == nil { try db.execute(sql: "DELETE FROM setting WHERE key = 'token-secret'") }
    }

    /// Adds them to a configuration, as if the flags had named them.
    public func apply(to configuration: inout LocalServerConfiguration) {
        for token in apiTokens where !configuration.apiTokens.contains(token.token) {
            configuration.apiTokens.append(token.token)
            if let container = token.container { configuration.credentialContainers[token.token] = container }
        }
        for user in users where !configuration.users.contains(where: { $0.token == user.token }) { configuration.users.append(user) }
        for key in serverKeys where !configuration.serverKeys.contains(where: { $0.keyID == key.keyID }) {
            configuration.serverKeys.append((keyID: key.keyID, publicKeyPEM: key.publicKeyPEM))
            if let container = key.container { configuration.credentialContainers[key.keyID] = container }
        }
    }
}
