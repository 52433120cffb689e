import ArgumentParser
import CloudKitLocal
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CloudKitWeb
import TOMLKit

/// `serve --config FILE.toml`: many users, tokens, keys and the containers each may use, in one file
/// (flags add to it):
///
///     container = "iCloud.com.example.App"        # what tokens and keys without one are bound to
///     allow-origins = ["http://localhost:8080"]   # "*" for any; default: pages served from this machine
///     allow-hosts = ["myapp.test"]                 # Host names besides IP addresses and localhost
///
///     [[api-tokens]]
///     token = "…"
///     container = "iCloud.com.example.App"        # optional
///
///     [[users]]
///     name = "alice"
///     token = "…"                                 # the web auth token that signs alice in
///     email = "alice@example.com"                 # optional
///
///     [[server-keys]]
///     key-id = "…"
///     public-key = "eckey.pub.pem"                # a PEM file (relative to this file) or the PEM itself
///     container = "iCloud.com.example.App"        # optional
///
///     [[roles]]
///     user = "alice"
///     role = "Moderator"
struct ServeConfig {
    var container: String?
    var allowOrigins: [String] = []
    var allowHosts: [String] = []
    var apiTokens: [(token: String, container: String?)] = []
    var users: [(name: String, token: String, email: String?)] = []
    var serverKeys: [(keyID: String, pem: String, container: String?)] = []
    var roles: [(user: String, role: String)] = []

    static func load(_ path: String) throws -> ServeConfig {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { throw ValidationError(SystemErrorWords.cannotRead(path)) }
        let document: TOMLTable
        do {
            document = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ValidationError("\(path):\(error.source.begin.line):\(error.source.begin.column): \(error.description)")
        }
        var config = ServeConfig()
        func fail(_ message: String) -> ValidationError { ValidationError("\(path): \(message)") }
        func string(_ table: TOMLTable, _ key: String, in what: String, required: Bool = true) throws -> String? {
            guard let value = table[key] else {
                if required { throw fail("\(what) needs \(key)") }
                return nil
            }
            guard let string = value.string, !string.isEmpty else { throw fail("\(what).\(key) must be a non-empty string") }
            return string
        }
        // A misspelt key is an error, in the tables too: `contianer` under [[api-tokens]] would
        // otherwise leave the token valid for every container, widening access without a word.
        func entries(_ key: String, keys known: Set<String>) throws -> [TOMLTable] {
            guard let value = document[key] else { return [] }
            guard let array = value.array else { throw fail("\(key) must be an array of tables ([[\(key)]])") }
            return try array.enumerated().map { i, element in
                guard let table = element.table else { throw fail("each [[\(key)]] must be a table") }
                for name in table.keys.sorted() where !known.contains(name) {
                    throw fail("unknown key '\(name)' in \(key)[\(i)] (known: \(known.sorted().joined(separator: ", ")))")
                }
                return table
            }
        }
        let known: Set<String> = ["container", "allow-origins", "allow-hosts", "api-tokens", "users", "server-keys", "roles"]
        for key in document.keys where !known.contains(key) {
            throw fail("unknown key '\(key)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        config.container = try string(document, "container", in: "the file", required: false)
        if let origins = document["allow-origins"] {
            guard let array = origins.array else { throw fail("allow-origins must be an array of strings") }
            config.allowOrigins = try array.map { guard let s = $0.string else { throw fail("allow-origins must be an array of strings") }; return s }
        }
        if let hosts = document["allow-hosts"] {
            guard let array = hosts.array else { throw fail("allow-hosts must be an array of strings") }
            config.allowHosts = try array.map { guard let s = $0.string else { throw fail("allow-hosts must be an array of strings") }; return s }
        }
        for (i, table) in try entries("api-tokens", keys: ["token", "container"]).enumerated() {
            let what = "api-tokens[\(i)]"
            config.apiTokens.append((try string(table, "token", in: what)!, try string(table, "container", in: what, required: false)))
        }
        for (i, table) in try entries("users", keys: ["name", "token", "email"]).enumerated() {
            let what = "users[\(i)]"
            config.users.append((try string(table, "name", in: what)!, try string(table, "token", in: what)!, try string(table, "email", in: what, required: false)))
        }
        for (i, table) in try entries("server-keys", keys: ["key-id", "public-key", "container"]).enumerated() {
            let what = "server-keys[\(i)]"
            let source = try string(table, "public-key", in: what)!
            var pem = source
            if !source.contains("-----BEGIN") {
                let file = source.hasPrefix("/") ? source : Paths.join(Paths.parent(path), source)
                do { pem = try String(contentsOfFile: file, encoding: .utf8) } catch { throw fail("\(what).public-key: " + SystemErrorWords.cannotRead(file)) }
            }
            guard pem.contains("BEGIN PUBLIC KEY") else { throw fail("\(what).public-key is not a PEM public key (openssl ec -in eckey.pem -pubout)") }
            config.serverKeys.append((try string(table, "key-id", in: what)!, pem, try string(table, "container", in: what, required: false)))
        }
        for (i, table) in try entries("roles", keys: ["user", "role"]).enumerated() {
            let what = "roles[\(i)]"
            config.roles.append((try string(table, "user", in: what)!, try string(table, "role", in: what)!))
        }
        return config
    }

    /// Adds the file's users, tokens, keys and origins to a server configuration.
    func apply(to configuration: inout LocalServerConfiguration) {
        for (token, container) in apiTokens {
            configuration.apiTokens.append(token)
            if let bound = container ?? self.container { configuration.credentialContainers[token] = bound }
        }
        for (name, token, email) in users {
            configuration.users.append((name: name, token: token))
            if let email { configuration.userContacts[name] = UserContact(email: email) }
        }
        for (keyID, pem, container) in serverKeys {
            configuration.serverKeys.append((keyID: keyID, publicKeyPEM: pem))
            if let bound = container ?? self.container { configuration.credentialContainers[keyID] = bound }
        }
        if !allowOrigins.isEmpty { configuration.allowedOrigins = Set(allowOrigins).union(configuration.allowedOrigins ?? []) }
        configuration.allowedHosts.formUnion(allowHosts.map { $0.lowercased() })
    }
}
