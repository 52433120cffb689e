/// A URL as a web browser reads it (the WHATWG URL Standard's basic parser, for `http` and `https`
/// only, which is all a sign-in callback or an origin may be), so that the host the server checks is
/// the host the browser will go to. Foundation's `URLComponents` follows RFC 3986 instead and reads
/// `http://evil.example\@127.0.0.1/` as host 127.0.0.1, where a browser goes to evil.example.
///
/// What the browser does and this reproduces: leading and trailing C0 controls and spaces are
/// stripped, tabs and newlines anywhere removed; the scheme is case-insensitive; after `scheme:` any
/// run of `/` and `\` is skipped; the authority ends at the first `/`, `\`, `?` or `#`; the userinfo
/// is everything up to the authority's *last* `@`; the host is percent-decoded and lower-cased; a host
/// that ends in a number is an IPv4 address in any of the forms browsers accept (`0x7f.1`,
/// `2130706433`, octal). Anything else odd (a non-ASCII host, forbidden host code points, a bad
/// port) is no URL at all.
struct BrowserURL: Equatable {
    var scheme: String
    /// Nil when there is none; callers refuse URLs that carry one.
    var userinfo: String?
    /// Lower case; IPv4 in dotted decimal; IPv6 in brackets as written.
    var host: String
    var port: Int?
    /// What follows the authority (path, query and fragment), as given.
    var path: String

    /// The origin a browser gives a page at this URL (`scheme://host[:port]`, default ports left out).
    var origin: String {
        let defaultPort = scheme == "https" ? 443 : 80
        return scheme + "://" + host + (port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
    }

    init?(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }
        let input = String(String.UnicodeScalarView(scalars))
        guard let colon = input.firstIndex(of: ":") else { return nil }
        let scheme = input[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = input[input.index(after: colon)...]
        while let first = rest.first, first == "/" || first == "\\" { rest = rest.dropFirst() }
        let end = rest.firstIndex { "/\\?#".contains($0) } ?? rest.endIndex
        var authority = rest[..<end]
        self.scheme = scheme
        self.path = String(rest[end...])
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        var hostPart = authority
        port = nil
        if let close = authority.lastIndex(of: "]"), authority.hasPrefix("[") {
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let port = Self.port(after.dropFirst()) else { return nil }
                self.port = port
            }
        } else if let mark = authority.lastIndex(of: ":") {
            hostPart = authority[..<mark]
            let digits = authority[authority.index(after: mark)...]
            if !digits.isEmpty {
                guard let port = Self.port(digits) else { return nil }
                self.port = port
            }
        }
        guard let host = Self.host(hostPart) else { return nil }
        self.host = host
    }

    static func port(_ digits: Substring) -> Int? {
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let value = Int(digits.prefix(6)), value <= 65535 else {
            return nil
        }
        return value
    }

    /// The host as the browser resolves it, or nil where the browser would refuse the URL.
    static func host(_ raw: Substring) -> String? {
        guard !raw.isEmpty else { return nil }
        if raw.hasPrefix("[") {
            guard raw.hasSuffix("]"), isIPv6Literal(raw.dropFirst().dropLast()) else { return nil }
            return raw.lowercased()
        }
        guard let decoded = PercentDecoding.decode(raw) else { return nil }
        let host = decoded.lowercased()
        // Non-ASCII hosts go through IDNA in a browser; no callback of ours needs one.
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 < 0x80 && $0 > 0x20 }) else { return nil }
        let forbidden = Set("#%/:<>?@[\\]^|")
        guard !host.contains(where: { forbidden.contains($0) }) else { return nil }
        // A host whose last label is a number is an IPv4 address (or invalid).
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let last = labels.last == "" && labels.count > 1 ? labels[labels.count - 2] : labels.last!
        if last.allSatisfy(\.isNumber) || (last.hasPrefix("0x") && last.dropFirst(2).allSatisfy(\.isHexDigit)) {
            return ipv4(host)
        }
        return host
    }

    /// The WHATWG IPv4 parser: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x); the last
    /// part fills the remaining bytes.
    static func ipv4(_ host: String) -> String? {
        var parts = host.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.last == "", parts.count > 1 { parts.removeLast() }
        guard (1...4).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard !part.isEmpty else { return nil }
            var text = Substring(part)
            var radix = 10
            if text.hasPrefix("0x") || text.hasPrefix("0X") {
                radix = 16
                text = text.dropFirst(2)
            } else if text.count > 1, text.hasPrefix("0") {
                radix = 8
                text = text.dropFirst()
            }
            if text.isEmpty {
                numbers.append(0)
                continue
            }
            guard text.count <= 20, let value = UInt64(text, radix: radix) else { return nil }
            numbers.append(value)
        }
        for number in numbers.dropLast() where number > 255 { return nil }
        let lastLimit = UInt64(1) << (8 * UInt64(5 - numbers.count))
        guard numbers.last! < lastLimit else { return nil }
        var address = numbers.last!
        for (index, number) in numbers.dropLast().enumerated() { address += number << (8 * UInt64(3 - index)) }
        return [24, 16, 8, 0].map { String((address >> UInt64($0)) & 255) }.joined(separator: ".")
    }

    static func isIPv4Literal(_ host: Substring) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        // ASCII digits only: `isNumber` also holds for `½` and `١`, which `Int` does not parse (a Host
        // of `½.1.1.1` once stopped the server).
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.utf8.count <= 3 && part.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } && Int(part)! <= 255
            }
    }

    static func isIPv6Literal(_ text: Substring) -> Bool {
        !text.isEmpty && text.contains(":") && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }

    /// 127.0.0.0/8, `localhost` and its subdomains, and `[::1]`.
    static func isLoopbackHost(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host == "[::1]" || host == "[0:0:0:0:0:0:0:1]" { return true }
        return isIPv4Literal(Substring(host)) && host.hasPrefix("127.")
    }
}

/// Percent-decoding that refuses malformed escapes and bytes that are not UTF-8.
enum PercentDecoding {
    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard iterator.count >= 2, let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
