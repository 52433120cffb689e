import CloudKitWeb
import Foundation
import Testing

/// The helpers that stand in for Foundation proper (which links ICU's data into the binary) give what
/// Foundation gives for the same input: checked against Foundation itself, which tests may link.
@Suite struct FoundationFreeTests {
    @Test func cFormatWritesWhatStringFormatWrites() {
        let cases: [(String, [any CVarArg])] = [
            ("item-%07d", [42]), ("%02x", [UInt8(0xAB)]), ("#%02x%02x%02x", [255, 0, 16]), ("%04X", [UInt32(0x1F600)]),
            ("%.1f", [2.25]), ("%.6f, %.6f", [52.520008, -13.404954]), ("%8.1f MB/s", [154.84]), ("%+.1f MB", [-3.25]),
            ("%d of %d: %.0f%%", [3, Int(Int32.max), 99.5]), ("REC-%06d-%08X", [7, UInt32.max]), ("%6d bytes", [-12]), ("plain", []),
            ("%.3f", [1e300]),
        ]
        // Where they differ, on purpose: every integer is read at its full width (Foundation's `%d`
        // reads 32 bits of an Int).
        #expect(String(cFormat: "%d", Int.max) == "9223372036854775807")
        for (format, arguments) in cases {
            let ours = String(cFormat: format, arguments: arguments)
            #expect(ours == String(format: format, arguments: arguments), "\(format)")
        }
    }

    @Test func trimmingAndPaddingAsFoundationDoes() {
        for text in ["", "  ", "a", " a b \n", "\t\u{00A0}x\u{2003}", "\r\nline\r\n", "é ", " 🧑‍🎨 "] {
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.debugDescription)")
        }
        for (text, length) in [("abc", 5), ("abcdef", 3), ("", 2), ("é", 4)] {
            #expect(text.padded(toLength: length) == text.padding(toLength: length, withPad: " ", startingAt: 0))
        }
        // Where they differ, on purpose: lengths are counted in characters, not UTF-16 units.
        #expect("é🧑‍🎨".padded(toLength: 4) == "é🧑‍🎨  ")
    }

    @Test func pathsAsNSStringTreatsThem() {
        for (base, component) in [("/tmp", "x"), ("/tmp/", "x"), ("/", "x"), ("", "x"), ("a/b", "c/d"), ("rel", "")] {
            #expect(Paths.join(base, component) == (base as NSString).appendingPathComponent(component), "\(base) + \(component)")
        }
        for path in ["/a/b.txt", "/a/b/", "/", "a", "", "a/b", "//a//b//", "/a"] {
            #expect(Paths.lastComponent(path) == (path as NSString).lastPathComponent, "last of \(path)")
        }
        // Linux's Foundation crashes in `deletingLastPathComponent` when called several times in a process:
        // what it answers, one call per run.
        for (path, parent) in [("/a/b.txt", "/a"), ("/a/b/", "/a"), ("/", "/"), ("a", ""), ("", ""), ("a/b", "a"), ("//a//b//", "/a"), ("/a", "/"), ("a//b/c", "a/b")] {
            #expect(Paths.parent(path) == parent, "parent of \(path)")
        }
        // Where they differ, on purpose: one slash between the two, as macOS's Foundation joins them
        // (Linux's gives "/a//b" for both).
        #expect(Paths.join("/a//", "b") == "/a/b")
        #expect(Paths.join("/a", "/b") == "/a/b")
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        for path in ["~", "~/x/y", "/abs", "rel/~", "~other"] where !home.isEmpty {
            #expect(Paths.expandingTilde(path) == (path as NSString).expandingTildeInPath || path == "~other", "\(path)")
        }
        for path in ["/a/./b/../c", "/a/b/", "/../a", "/a//b", "/x/y/.."] {
            #expect(Paths.standardized(path) == (path as NSString).standardizingPath, "\(path)")
        }
    }

    @Test func integerAttributesAreReadWhateverTheirType() throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: #filePath)
        #expect(integerAttribute(attributes[.size]) == (attributes[.size] as? NSNumber)?.intValue)
        #expect(integerAttribute(attributes[.posixPermissions]) == (attributes[.posixPermissions] as? NSNumber)?.intValue)
        #expect(FileManager.default.isDirectory(atPath: #filePath) == false)
        #expect(FileManager.default.isDirectory(atPath: "/") == true)
        #expect(FileManager.default.isDirectory(atPath: "/no/such/path") == nil)
    }
}
