import HTTPTypes
import NIOHTTP1
import Testing

@testable import CloudKitLocal

/// An answer made on the event loop has its head built in NIO's types directly
/// (`LocalHTTPServer.responseHead`): the same head, field for field, as the answer's headers made into
/// swift-http-types' fields and converted, the way it was made before.
@Suite struct DirectAnswersTests {
    @Test func theHeadIsTheOneSwiftHTTPTypesMakes() {
        let common: [(name: String, value: String)] = [
            ("Content-Type", "application/json; charset=utf-8"), ("X-Apple-Request-UUID", "0f5c6a9e-1b7d-4c39-9a43-6d2f1e8b7c01"),
            ("Access-Control-Allow-Origin", "http://localhost:3000"), ("Vary", "Origin"), ("Access-Control-Allow-Credentials", "true"),
        ]
        let odd: [(name: String, value: String)] = [
            ("X-Custom", "plain"), ("x-lower", "v"), ("Bad Name", "dropped"), ("", "empty name"), (":status", "pseudo"),
            ("X-CRLF", "a\r\nInjected: yes"), ("X-NUL", "a\u{0}b"), ("X-Space", "  padded  "), ("X-Unicode", "é ✓ 😀"),
            ("X-Tab", "a\tb"), ("X-Empty", ""), ("Content-Type", "second\nline"),
        ]
        let cases: [[(name: String, value: String)]] = [[], common, odd, common + odd, odd + common]
        for status in [200, 201, 204, 304, 400, 401, 404, 405, 421, 500, 503, 599, 299] {
            for (index, headers) in cases.enumerated() {
                let ours = LocalHTTPServer.responseHead(status: status, headers: headers, contentLength: 1234, date: "Sun, 06 Dec 2026 18:40:00 GMT")
                let theirs = LocalHTTPServer.slowResponseHead(status: status, headers: headers, contentLength: 1234, date: "Sun, 06 Dec 2026 18:40:00 GMT")
                #expect(ours.version == theirs.version && ours.status.code == theirs.status.code, "status \(status), case \(index)")
                #expect(ours.status.reasonPhrase == theirs.status.reasonPhrase, "status \(status), case \(index)")
                #expect(ours.headers.map { "\($0.name): \($0.value)" } == theirs.headers.map { "\($0.name): \($0.value)" }, "status \(status), case \(index)")
            }
        }
        // Headers that name Content-Length or Date take swift-http-types' path (its subscript replaces them
        // in place): one of each is sent, with the answer's values.
        let lengthOrDate = LocalHTTPServer.responseHead(
            status: 200, headers: [("content-length", "999"), ("X-After", "1"), ("DATE", "yesterday")], contentLength: 1234, date: "today")
        #expect(lengthOrDate.headers.map { "\($0.name): \($0.value)" } == ["Content-Length: 1234", "X-After: 1", "Date: today"])
        // The comparison can fail: a value with a line break is legalized, never sent as it is.
        let injected = LocalHTTPServer.responseHead(status: 200, headers: [("X-CRLF", "a\r\nInjected: yes")], contentLength: 0, date: "d")
        #expect(injected.headers.count == 3 && !injected.headers.contains { $0.value.contains("\n") || $0.name == "Injected" })
        #expect(injected.headers.map(\.name) == ["X-CRLF", "Content-Length", "Date"])
    }
}
