import HTTPTypes
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Testing

@testable import CloudKitLocal

/// The server's own conversion of a request head (`OriginFormServerCodec`) gives what swift-nio-extras'
/// codec gives, for every kind of target: it only skips that codec's URL parse where the parse changes
/// nothing.
@Suite struct OriginFormCodecTests {
    @Test func theRequestIsTheOneSwiftNIOExtrasMakes() throws {
        let targets = [
            "/", "/database/1/iCloud.a/development/private/records/query?ckAPIToken=t&ckWebAuthToken=a%2Bb%3D",
            "/a//b?x=1&x=2#frag", "/%E2%82%AC?q=%20", "/ready?", "/path with space", "/é", "//double", "/?",
            "http://127.0.0.1:8080/database/1/x?y=z", "https://example.com", "*", "example.com:443", "relative/path", "",
        ]
        var refused = 0
        for method in [HTTPMethod.GET, .POST, .OPTIONS, .RAW(value: "PURGE"), .RAW(value: "NOT A TOKEN")] {
            for target in targets {
                var headers = HTTPHeaders([("Host", "127.0.0.1:8080"), ("Origin", "http://evil.example"), ("Cookie", "a=1; b=2"), ("X-Two", "1"), ("x-two", "2")])
                if target == "*" { headers.remove(name: "Host") }
                let head = HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: headers)
                let theirs = Result { try HTTPRequest(head, secure: false, splitCookie: false) }
                let ours = Result { try OriginFormServerCodec.request(head) }
                switch (theirs, ours) {
                case (.success(let a), .success(let b)):
                    #expect(a == b, "\(method) \(target)")
                    #expect(a.path == b.path && a.authority == b.authority && a.scheme == b.scheme && Array(a.headerFields) == Array(b.headerFields))
                case (.failure, .failure): refused += 1
                default: Issue.record("\(method) \(target): \(theirs) against \(ours)")
                }
            }
        }
        #expect(refused >= targets.count, "a method that is not a token is refused by both")
    }
}
