#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CloudKitModels

/// Files that hold secrets (the token secret, users' data, push tokens, snapshots of them) are the
/// owner's alone: directories 0700, files 0600, created so from the first byte (never widened later),
/// and never reached through a symbolic link someone else could have planted.
enum OwnerOnlyFiles {
    /// Creates `directory` 0700, or tightens an existing one that is this server's (empty, or holding
    /// `marker`) to 0700. Another directory (`--data .` in a home directory) is left as it is: its
    /// files are owner-only all the same.
    static func prepareDirectory(_ directory: String, holding marker: String) throws {
        guard let isDirectory = FileManager.default.isDirectory(atPath: directory) else {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            return
        }
        guard isDirectory else { throw SnapshotError(message: "\(directory) is not a directory") }
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        if contents.isEmpty || contents.contains(marker) {
            chmod(directory, 0o700)
        }
    }

    /// Creates `path` empty with mode 0600 if it does not exist, tightens it (and its `companions`:
    /// SQLite's `-wal`, `-shm`) to 0600 if it does, and refuses links.
    static func prepareFile(_ path: String, companions: [String]) throws {
        for file in [path] + companions.map({ path + $0 }) {
            if isLink(file) { throw SnapshotError(message: "\(file) is a symbolic link: refusing to write through it") }
        }
        let fd = open(path, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SnapshotError(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        fchmod(fd, 0o600)
        close(fd)
        for file in companions.map({ path + $0 }) where FileManager.default.fileExists(atPath: file) { try tighten(file) }
    }

    /// Mode 0600 for a file that exists.
    static func tighten(_ path: String) throws {
        guard chmod(path, 0o600) == 0 else { throw SnapshotError(message: "cannot make \(path) owner-only: \(String(cString: strerror(errno)))") }
    }

    /// True when `path` is a symbolic link (readlink succeeds only on one).
    static func isLink(_ path: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
    }
}
