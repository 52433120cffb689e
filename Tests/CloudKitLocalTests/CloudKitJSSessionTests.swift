import CloudKitWeb
import Foundation
import Testing

@testable import CloudKitLocal

/// Issue 29, items 1 and 7: the sign-in popup and single-use tokens as Apple's CloudKit JS 2.6.4 uses
/// them. Requests carry what CloudKit JS sends (`ckjsBuildVersion`, `ckjsVersion`, `clientId`, a
/// percent-encoded `ckWebAuthToken`, `text/plain` bodies, the page's `Origin`); the checks read what
/// CloudKit JS reads (the popup's `event.data.ckSession`; a rotated token only from a 2xx answer).
@Suite struct CloudKitJSSessionTests {
    static let ckjs = "ckjsBuildVersion=2420ProjectDev22&ckjsVersion=2.6.4&clientId=6f0e8a0c-4c1b-4a55-9d59-0b1f1e0e2a11"
    static let page = ("Origin", "http://localhost:8080")

    func query(_ token: String?) -> String {
        Self.ckjs + "&ckAPIToken=\(LiveServer.apiToken)" + (token.map { "&ckWebAuthToken=" + PercentEncoding.encodeQueryValue($0) } ?? "")
    }

    /// 1. The popup: CloudKit JS opens the 421's `redirectURL`; the page posts `{ckSession}` to the
    /// window that opened it, at the page's origin.
    @Test func thePopupHandsCkSessionToTheOpenerAtItsOrigin() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let refused = try await server.raw(.get, server.path("private", "users/caller"), query: query(nil), headers: [Self.page])
        #expect(refused.status == 421 && refused.header("Access-Control-Allow-Origin") == "http://localhost:8080")
        let redirect = try #require(try JSON(parsing: refused.body)["redirectURL"]?.stringValue)
        let target = String(redirect.dropFirst(server.url.count))
        let (path, pageQuery) = (target.components(separatedBy: "?")[0], target.components(separatedBy: "?")[1])
        #expect(pageQuery.contains("origin=http%3A%2F%2Flocalhost%3A8080"))
        let page = try await server.raw(.get, path, query: pageQuery, headers: [("Sec-Fetch-Mode", "navigate")])
        let html = String(decoding: page.body, as: UTF8.self)
        let nonce = try #require(html.firstRange(of: #"name="form" value=""#).map { html[$0.upperBound...].prefix { $0 != "\"" } })
        let form = "user=alice&container=\(LiveServer.container)&callback=&origin=http%3A%2F%2Flocalhost%3A8080&form=\(nonce)"
        let signedIn = try await server.raw(
            .post, "/signin", query: "", body: form,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", server.url), ("Sec-Fetch-Mode", "navigate")])
        let script = String(decoding: signedIn.body, as: UTF8.self)
        #expect(signedIn.status == 200)
        #expect(script.contains(#", "http://localhost:8080")"#) || script.contains(#","http://localhost:8080")"#), "posted to the opener's origin")
        #expect(!script.contains("'*'") && !script.contains(#""*""#), "never to any origin")
        let message = try #require(script.firstRange(of: "postMessage(").map { script[$0.upperBound...].prefix { $0 != "}" } + "}" })
        let data = try JSON(parsing: Array(message.replacingOccurrences(of: "\\u003c", with: "<").utf8))
        let ckSession = try #require(data["ckSession"]?.stringValue, "CloudKit JS's listener reads event.data.ckSession")
        #expect(data["ckWebAuthToken"]?.stringValue == ckSession, "and the reference's name carries the same token")
        // CloudKit JS then calls users/caller with it.
        let caller = try await server.raw(.get, server.path("private", "users/caller"), query: query(ckSession), headers: [Self.page])
        #expect(caller.status == 200 && caller.header("X-Apple-CloudKit-Web-Auth-Token") != nil)
    }

    /// 7. `serve --single-use-tokens`: every user-authenticated 2xx answer carries the next token, and
    /// a token is spent only by such an answer, so CloudKit JS (which adopts a token only from a 2xx
    /// answer) keeps working after an error.
    @Test func singleUseTokensKeepCloudKitJSWorkingAfterAnError() async throws {
        let server = try await LiveServer.start(configure: { $0.singleUseWebAuthTokens = true })
        defer { Task { await server.stop() } }
        let plain = ("Content-Type", "text/plain")
        let created = try await server.raw(
            .post, "/device/1/\(LiveServer.container)/development/tokens/create", query: query(LiveServer.alice.token),
            body: #"{"apnsEnvironment":"development"}"#, headers: [plain, Self.page])
        #expect(created.status == 200)
        let next = try #require(created.header("X-Apple-CloudKit-Web-Auth-Token"), "tokens/create's answer carries the next token")
        // An error answer: CloudKit JS keeps `next`, so `next` must still work.
        let failed = try await server.raw(
            .post, server.path("private", "records/lookup"), query: query(next), body: #"{"records":"not an array"}"#, headers: [plain, Self.page])
        #expect(failed.status == 400 && failed.header("X-Apple-CloudKit-Web-Auth-Token") == nil)
        let zones = try await server.raw(.get, server.path("private", "zones/list"), query: query(next), headers: [Self.page])
        #expect(zones.status == 200, "the token survives the error answer")
        let after = try #require(zones.header("X-Apple-CloudKit-Web-Auth-Token"))
        let reused = try await server.raw(.get, server.path("private", "zones/list"), query: query(next), headers: [Self.page])
        #expect(reused.status == 421, "a 2xx answer replaced it: spent")
        #expect(try await server.raw(.get, server.path("private", "zones/list"), query: query(after), headers: [Self.page]).status == 200)
    }
}
