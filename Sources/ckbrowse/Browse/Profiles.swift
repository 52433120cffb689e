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
            for key in table.keys {
                guard let value = table[key] else { continue }
                if let string = value.string {
                    values[key] = string
                } else if let bool = value.bool {
                    values[key] = bool ? "true" : "false"
                } else if let int = value.int {
                    values[key] = String(int)
                } else {
                    throw ValidationErrorText("\(path): profiles.\(name).\(key): use a string, true/false or a number")
                }
            }
            file.profiles[name] = values
        }
        return file
    }
}

struct ValidationErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
