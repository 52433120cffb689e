#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Text helpers that Foundation proper provides (`String(format:)`, `trimmingCharacters(in:)`,
// `padding(toLength:)`, path methods of NSString), written on the standard library and libc so that no
// module of ckbrowse links Foundation proper and, with it, ICU (PERFORMANCE.md, issue 33).
// Package-internal: not part of the client API.

extension String {
    /// `printf`-style formatting through libc's `vsnprintf`: `%d %i %u %x %X` (any Swift integer),
    /// `%f %e %g` (Double), `%c`, `%%`, with flags, width and precision. `%@` and `%s` are not
    /// supported (interpolate strings instead). Numbers are written in the C locale: the browser sets
    /// only LC_CTYPE from the environment and keeps LC_NUMERIC "C" (CLibc's `clibc_setup_utf8_locale`).
    package init(cFormat format: String, _ arguments: any CVarArg...) {
        self.init(cFormat: format, arguments: arguments)
    }

    /// `init(cFormat:_:)` with the arguments in an array.
    package init(cFormat format: String, arguments: [any CVarArg]) {
        // Every Swift integer is passed as a full machine word: each integer conversion reads a long.
        var rewritten = ""
        var chars = format.makeIterator()
        while let c = chars.next() {
            rewritten.append(c)
            guard c == "%" else { continue }
            var spec = ""
            while let next = chars.next() {
                if "diuxXo".contains(next) {
                    rewritten += spec + "l" + String(next)
                    break
                } else if "-+ #0123456789.".contains(next) {
                    spec.append(next)
                } else if next == "l" || next == "h" || next == "z" || next == "j" {
                    continue  // the length is always a long's
                } else {
                    rewritten += spec + String(next)
                    break
                }
            }
        }
        self = withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 256)
            let needed = Int(vsnprintf(&buffer, buffer.count, rewritten, list))
            guard needed >= buffer.count else { return String(cString: buffer) }
            return withVaList(arguments) { again in
                buffer = [CChar](repeating: 0, count: needed + 1)
                _ = vsnprintf(&buffer, buffer.count, rewritten, again)
                return String(cString: buffer)
            }
        }
    }

    /// The two lower-case hex digits of each byte, joined.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension StringProtocol {
    /// Without white space and line ends (Unicode's White_Space property) at either end, as
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    package func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// Cut or padded with spaces on the right to `length` characters, as
    /// `padding(toLength:withPad: " ", startingAt: 0)`.
    package func padded(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : String(self) + String(repeating: " ", count: length - count)
    }
}

/// File paths as NSString's path methods treat them, on plain strings.
package enum Paths {
    /// `base` and `component` joined by one "/".
    package static func join(_ base: String, _ component: String) -> String {
        if base.isEmpty { return component }
        var head = Substring(base)
        while head.count > 1, head.hasSuffix("/") { head = head.dropLast() }
        var tail = Substring(component)
        while tail.hasPrefix("/") { tail = tail.dropFirst() }
        if tail.isEmpty { return String(head) }
        return head == "/" ? "/" + tail : head + "/" + tail
    }

    /// The last component (`/a/b.txt` → `b.txt`; `/` → `/`).
    package static func lastComponent(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        if trimmed == "/" { return "/" }
        return String(trimmed.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
    }

    /// The path without its last component (`/a/b` → `/a`, `/a` → `/`, `a` → ``).
    package static func parent(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        // Runs of slashes are one, as Foundation reads them.
        let joined = trimmed[..<slash].split(separator: "/").joined(separator: "/")
        return trimmed.hasPrefix("/") ? "/" + joined : joined
    }

    /// Why `path` could not be read, asked of the file system after the read failed: missing, a
    /// directory, not readable, or (readable after all) not `expected`.
    package static func whyUnreadable(_ path: String, expected: String = "UTF-8 text") -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return String(cString: strerror(errno)) }
        if (info.st_mode & S_IFMT) == S_IFDIR { return "it is a directory" }
        guard access(path, R_OK) == 0 else { return String(cString: strerror(errno)) }
        return "it is not \(expected)"
    }

    /// Why a file could not be made at `path`, asked of its directory: missing, not a directory, not
    /// writable; else of the path itself (a directory there).
    package static func whyUnwritable(_ path: String) -> String {
        let directory = parent(path).isEmpty ? "." : parent(path)
        var info = stat()
        guard stat(directory, &info) == 0 else { return "\(directory): " + String(cString: strerror(errno)) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return "\(directory) is not a directory" }
        guard access(directory, W_OK) == 0 else { return "\(directory): " + String(cString: strerror(errno)) }
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return "it is a directory" }
        return "the file system refused it"
    }

    /// `~` and `~/…` with the home directory in front (`home`, `$HOME` by default); other paths as
    /// they are.
    package static func expandingTilde(_ path: String, home: String? = nil) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let base = home ?? getenv("HOME").map { String(cString: $0) } ?? ""
        guard !base.isEmpty else { return path }
        return path == "~" ? base : join(base, String(path.dropFirst(2)))
    }

    /// `~` expanded, then `.` and empty components removed and `..` taken back, as
    /// `NSString.standardizingPath` does for an absolute path; a relative path keeps a leading `..`.
    package static func standardized(_ path: String) -> String {
        let expanded = expandingTilde(path)
        let absolute = expanded.hasPrefix("/")
        var parts: [Substring] = []
        for part in expanded.split(separator: "/") {
            switch part {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." { parts.removeLast() } else if !absolute { parts.append(part) }
            default: parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }
}
