import CloudKitWeb
import Foundation
import GRDB

/// Opens a SQLite file of the browser's own (cache, journal) in a folder only the user can enter, the
/// file readable by its owner only. The name is `PREFIX<container>-<environment>.sqlite`, with the
/// container reduced to characters safe in a file name.
enum OwnerOnlyDatabase {
    static func open(
        directory: String, prefix: String, container: String, environment: CloudKitEnvironment, configuration: Configuration
    ) throws -> (pool: DatabasePool, path: String) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let safe = String(container.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        let path = (directory as NSString).appendingPathComponent("\(prefix)\(safe)-\(environment.rawValue).sqlite")
        // Created owner-only before SQLite opens it: its -wal and -shm files copy the database's mode.
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
        return (pool, path)
    }
}
