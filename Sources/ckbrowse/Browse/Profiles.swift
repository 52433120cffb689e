import BrowserRuntime
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

/// Profiles from `$XDG_CONFIG_HOME/ckbrowse/config.toml`:
///
/// ```toml
/// [profiles.notes-dev]
/// container = "iCloud.com.example.Notes"
/// environment = "development"
/// database = "private"
/// api-token = "…"          # or api-token-env = "NOTES_TOKEN"
/// web-auth-token = "…"
/// key-id = "…"
/// key-file = "~/.config/ckbrowse/notes.pem"
/// server = "https://api.apple-cloudkit.com"
/// read-only = true
/// allow-writes = false
/// ```
///
/// Read with TOMLKit (toml++): the whole TOML grammar, and errors that name the line and column.
struct ProfileFile {
    var profiles: [String: [String: String]] = [:]

    static var defaultPath: String {
        Paths.join(XDG.configHome(), "ckbrowse/config.toml")
    }

    static func load(path: String = defaultPath) throws -> ProfileFile {
        guard FileManager.default.fileExists(atPath: path) else { return ProfileFile() }
        return try parse(String(contentsOfFile: path, encoding: .utf8), path: path)
    }

    static func parse(_ text: String, path: String = "config.toml") throws -> ProfileFile {
        let document: TOMLTable
        do {
            document = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let at = error.source.begin
            throw ValidationErrorText("\(path):\(at.line):\(at.column): \(error.description)")
        }
        var file = ProfileFile()
        for key in document.keys where key != "profiles" {
            throw ValidationErrorText("\(path): '\(key)' outside a [profiles.NAME] table")
        }
        guard let profiles = document["profiles"] else { return file }
        guard let tables = profiles.table else { throw ValidationErrorText("\(path): 'profiles' must be a table of [profiles.NAME] tables") }
        for name in tables.keys {
            guard let table = tables[name]?.table else {
                throw ValidationErrorText("\(path): profiles.\(name) must be a table ([profiles.\(name)])")
            }
            var values: [String: String] = [:]
            // A key the file does not know, or a value of another kind, is an error naming it: a
            // misspelt `readonly = true`, or `read-only = "yes"`, was read as no setting at all, and
            // the profile wrote where it was meant to refuse.
            for key in table.keys.sorted() {
                guard let value = table[key] else { continue }
                let at = "\(path): profiles.\(name).\(key)"
                if Self.switches.contains(key) {
                    guard let bool = value.bool else { throw ValidationErrorText("\(at): use true or false (unquoted)") }
                    values[key] = bool ? "true" : "false"
                } else if Self.texts.contains(key) {
                    guard let string = value.string else { throw ValidationErrorText("\(at): use a string (in quotes)") }
                    values[key] = string
                } else {
                    throw ValidationErrorText("\(at): unknown key (known: \((Self.texts + Self.switches).sorted().joined(separator: ", ")))")
                }
            }
            file.profiles[name] = values
        }
        return file
    }
}

extension ProfileFile {
    /// The keys a profile takes: settings that are text, and switches.
    static let texts = ["server", "container", "environment", "database", "api-token", "api-token-env", "web-auth-token", "web-auth-token-env", "key-id", "key-file"]
    static let switches = ["read-only", "allow-writes"]
}

struct ValidationErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
