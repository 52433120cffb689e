import CloudKitWeb
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SQLiteDB
import RecordBrowser

/// Opens a SQLite file of the browser's own (cache, journal) in a folder only the user can enter, the
/// file readable by its owner only. One file per account (server, container, environment, signed-in
/// identity): the name is `PREFIX<container>-<environment>-<hash>.sqlite`, the container reduced to
/// characters safe in a file name and the hash taken over the whole account, and the file records the
/// account it belongs to (checked on every open).
enum OwnerOnlyDatabase {
    static func open(
        directory: String, prefix: String, account: Account, configuration: Configuration
    ) throws -> (pool: DatabasePool, path: String) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = Paths.join(directory, "\(prefix)\(safeName(account.container))-\(account.environment.rawValue)-\(hash(account)).sqlite")
        // Created owner-only before SQLite opens it: its -wal and -shm files copy the database's mode.
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS account (description TEXT NOT NULL)")
            if let stored = try String.fetchOne(db, sql: "SELECT description FROM account") {
                guard stored == account.description else { throw AccountMismatch(path: path) }
            } else {
                try db.execute(sql: "INSERT INTO account (description) VALUES (?)", arguments: [account.description])
            }
        }
        return (pool, path)
    }

    /// The file an earlier version kept for a container and environment, whatever the server and user.
    static func legacyPath(directory: String, prefix: String, container: String, environment: CloudKitEnvironment) -> String {
        Paths.join(directory, "\(prefix)\(safeName(container))-\(environment.rawValue).sqlite")
    }

    static func remove(_ path: String) {
        for file in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: file) }
    }

    static func safeName(_ container: String) -> String {
        String(container.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
    }

    /// 16 hex digits of SHA-256 over the account's description.
    static func hash(_ account: Account) -> String {
        SHA256.hash(data: Data(account.description.utf8)).prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// A file named for one account records another (a hash collision, or a file copied by hand).
public struct AccountMismatch: Error, CustomStringConvertible {
    public var path: String
    public var description: String { "\(path) belongs to another server, container or user; it is left untouched" }
}
