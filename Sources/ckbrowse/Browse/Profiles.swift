import BrowserCache
import Foundation

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
/// A small reader for this subset of TOML: tables, `key = "string"`, `'literal'`, booleans, integers, comments.
struct ProfileFile {
    var profiles: [String: [String: String]] = [:]

    static var defaultPath: String {
        (XDG.configHome() as NSString).appendingPathComponent("ckbrowse/config.toml")
    }

    static func load(path: String = defaultPath) throws -> ProfileFile {
        guard FileManager.default.fileExists(atPath: path) else { return ProfileFile() }
        return try parse(String(contentsOfFile: path, encoding: .utf8), path: path)
    }

    static func parse(_ text: String, path: String = "config.toml") throws -> ProfileFile {
        var file = ProfileFile()
        var table: String?
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = stripComment(String(rawLine)).trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            func fail(_ why: String) -> Error {
                ValidationErrorText("\(path):\(number + 1): \(why)")
            }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else { throw fail("unterminated table header") }
                var name = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                if name.hasPrefix("profiles.") { name.removeFirst("profiles.".count) }
                name = name.trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
                guard !name.isEmpty else { throw fail("empty table name") }
                table = name
                file.profiles[name, default: [:]] = file.profiles[name] ?? [:]
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { throw fail("expected key = value") }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            let rawValue = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard let table else { throw fail("'\(key)' outside a [profiles.NAME] table") }
            let value: String
            if rawValue.hasPrefix("\"") && rawValue.hasSuffix("\"") && rawValue.count >= 2 {
                value = unescape(String(rawValue.dropFirst().dropLast()))
            } else if rawValue.hasPrefix("'") && rawValue.hasSuffix("'") && rawValue.count >= 2 {
                value = String(rawValue.dropFirst().dropLast())
            } else if ["true", "false"].contains(rawValue) || Int(rawValue) != nil {
                value = rawValue
            } else {
                throw fail("unsupported value for '\(key)' (use a quoted string, true/false or a number)")
            }
            file.profiles[table, default: [:]][key] = value
        }
        return file
    }

    static func stripComment(_ line: String) -> String {
        var inString: Character?
        var result = ""
        for c in line {
            if let q = inString {
                if c == q { inString = nil }
            } else if c == "\"" || c == "'" {
                inString = c
            } else if c == "#" {
                break
            }
            result.append(c)
        }
        return result
    }

    static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\")
            .replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\t", with: "\t")
    }
}

struct ValidationErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
