import CloudKitWeb
import Foundation
import HTTPTypes
import Testing

@testable import CloudKitLocal

/// The server's trust boundaries (issue 28; SERVER.md, "Threat model") on their own: URLs read as a
/// browser reads them, the endpoint table, credentials that are the configuration's, minted tokens
/// that expire and are revoked, download URLs that expire and follow access. The attacks themselves
/// run against the real binary in tests/security/.
@Suite struct TrustBoundaryTests {
    @Test func urlsAreReadAsABrowserReadsThem() {
        func host(_ text: String) -> String? { BrowserURL(text)?.host }
        #expect(host("http://evil.example\\@127.0.0.1/") == "evil.example", "a backslash ends the authority in a browser")
        #expect(BrowserURL("http://evil.example\\@127.0.0.1/")?.userinfo == nil)
        #expect(host("http://127.0.0.1@evil.example/") == "evil.example" && BrowserURL("http://127.0.0.1@evil.example/")?.userinfo == "127.0.0.1")
        #expect(host("http://a@b@evil.example/x") == "evil.example", "the last @ ends the userinfo")
        #expect(host("http://evil%2eexample/") == "evil.example", "hosts are percent-decoded")
        #expect(host("HTTP://LOCALHOST:8080/cb") == "localhost" && BrowserURL("HTTP://LOCALHOST:8080/cb")?.port == 8080)
        #expect(host("http:\\\\evil.example/") == "evil.example" && host(" \thttp://evil.example\n/") == "evil.example")
        #expect(host("http://0x7f.1/") == "127.0.0.1" && host("http://2130706433/") == "127.0.0.1" && host("http://0177.0.0.1/") == "127.0.0.1")
        #expect(host("http://1.2.3.256/") == nil && host("http://exa mple/") == nil && host("http://[::1]:99/") == "[::1]")
        #expect(host("javascript:alert(1)") == nil && host("file:///etc/passwd") == nil && host("http://h:99999/") == nil)
        #expect(BrowserURL("http://localhost:3000/")?.origin == "http://localhost:3000" && BrowserURL("https://x.test:443")?.origin == "https://x.test")
        #expect(LocalCloudKit.isLoopbackOrigin("http://localhost:3000") && LocalCloudKit.isLoopbackOrigin("http://127.0.0.2"))
        #expect(!LocalCloudKit.isLoopbackOrigin("http://localhost.evil.example") && !LocalCloudKit.isLoopbackOrigin("null"))
        let location = LocalCloudKit.location(BrowserURL("http://localhost:9/back#frag")!, token: "t+/=")
        #expect(location == "http://localhost:9/back?ckWebAuthToken=t%2B%2F%3D#frag")
    }

    @Test func everyEndpointHasOneRuleThatRoutingReads() throws {
        for endpoint in Route.endpoints + [.tokensCreate, .tokensRegister] {
            #expect(EndpointRule.rule(endpoint) != nil, "\(endpoint.operation) has no rule")
        }
        let names = EndpointRule.all.map { $0.method + " " + $0.name }
        #expect(Set(names).count == names.count, "one rule per endpoint")
        // The table is what routing, authentication and the cache read.
        let publicQuery = try Route(path: "/database/1/iCloud.x/development/public/records/query", method: "POST")
        #expect(!publicQuery.needsUser && publicQuery.isCacheable && publicQuery.isBounded)
        let privateQuery = try Route(path: "/database/1/iCloud.x/development/private/records/query", method: "POST")
        #expect(privateQuery.needsUser)
        let modify = try Route(path: "/database/1/iCloud.x/development/public/records/modify", method: "POST")
        #expect(modify.needsUser && !modify.isCacheable && !modify.isBounded)
        #expect(EndpointRule.rule(path: "/admin/1/iCloud.x/development/reset", method: "POST")?.pages == EndpointRule.Pages.none)
        #expect(EndpointRule.rule(path: "/signin", method: "POST")?.pages == .ownPage)
        #expect(EndpointRule.rule(path: "/nothing", method: "GET") == nil)
        #expect(EndpointRule.markdown.split(separator: "\n").count == EndpointRule.all.count + 2)
    }

    /// A refusal names the whole path it refuses: it was cut at 40 characters, mid-word
    /// ("…/developm: it is for tools"), as a new-user trial read it.
    @Test func refusalsNameTheWholePath() async throws {
        let directory = QueryIndexTests.temporaryDirectory("refusal")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try service({ _ in }, directory: directory)
        let path = "/admin/1/iCloud.com.example.AnotherApp/development/reset"
        let answer = await service.handle(ServerRequest(
            method: "POST", path: path, query: "ckAPIToken=api", headers: [("Origin", "http://localhost:3000")], body: Array("{}".utf8)))
        #expect(answer.status == 403)
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(text.contains("web pages may not call '\(path)': it is for tools"), "\(text)")
    }

    func service(_ configure: (inout LocalServerConfiguration) -> Void, directory: String) throws -> LocalCloudKit {
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = ["api"]
        configure(&configuration)
        return try LocalCloudKit(store: try Store(directory: directory), configuration: configuration)
    }

    func zonesList(_ service: LocalCloudKit, api: String = "api", token: String?) async -> ServerResponse {
        var query = "ckAPIToken=" + api
        if let token { query += "&ckWebAuthToken=" + PercentEncoding.encodeQueryValue(token) }
        return await service.handle(ServerRequest(method: "GET", path: "/database/1/iCloud.x/development/private/zones/list", query: query, headers: [], body: []))
    }

    @Test func credentialsAreTheConfigurationsAndMintedTokensExpireAndAreRevoked() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(UUID().uuidString)").path
        let clock = TestClock()
        let first = try service({ $0.users = [(name: "alice", token: "alice-1"), (name: "bob", token: "bob-1")]; $0.now = { clock.now }; $0.webAuthTokenLifetime = 60 }, directory: directory)
        let answer = await zonesList(first, token: "alice-1")
        #expect(answer.status == 200)
        let minted = try #require(answer.headers.first { $0.name == "X-Apple-CloudKit-Web-Auth-Token" }?.value)
        #expect(await zonesList(first, token: minted).status == 200)
        clock.advance(61)
        #expect(await zonesList(first, token: minted).status == 421, "a minted token expires")
        #expect(await zonesList(first, token: "alice-1").status == 200, "a configured token does not")
        let fresh = try #require(await zonesList(first, token: "alice-1").headers.first { $0.name == "X-Apple-CloudKit-Web-Auth-Token" }?.value)
        // Restarted with alice's token changed, bob removed and another API token.
        let second = try service({ $0.apiTokens = ["api-2"]; $0.users = [(name: "alice", token: "alice-2")]; $0.now = { clock.now } }, directory: directory)
        #expect(await zonesList(second, token: nil).status == 401, "the removed API token")
        #expect(await zonesList(second, api: "api-2", token: "bob-1").status == 421, "the removed user")
        #expect(await zonesList(second, api: "api-2", token: "alice-1").status == 421, "alice's old token")
        #expect(await zonesList(second, api: "api-2", token: fresh).status == 421, "a token minted under alice's old token")
        #expect(await zonesList(second, api: "api-2", token: "alice-2").status == 200)
        // Forged: a token naming alice with another MAC.
        let forged = OpaqueToken.encode(["w2", "alice", "s", String(Int(clock.now.timeIntervalSince1970) + 600), "n", "AAAA"])
        #expect(await zonesList(second, api: "api-2", token: forged).status == 421)
    }

    /// Answers within one second share their minted token (it would differ only in its nonce), unless
    /// tokens are single-use: then each answer's token is its own and works once.
    @Test func mintedTokensAreSharedWithinASecondUnlessSingleUse() async throws {
        // Stopped a quarter into a second (the test clock follows the real one, which may tick between two answers).
        final class StoppedClock: @unchecked Sendable {
            private let lock = NSLock()
            private var time = Date(timeIntervalSince1970: 1_900_000_000.25)
            var now: Date { lock.withLock { time } }
            func advance(_ seconds: TimeInterval) { lock.withLock { time += seconds } }
        }
        let clock = StoppedClock()
        func directory() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(UUID().uuidString)").path }
        func minted(_ answer: ServerResponse) throws -> String {
            #expect(answer.status == 200)
            return try #require(answer.headers.first { $0.name == "X-Apple-CloudKit-Web-Auth-Token" }?.value)
        }
        let reusable = try service({ $0.users = [(name: "alice", token: "alice-1"), (name: "bob", token: "bob-1")]; $0.now = { clock.now } }, directory: directory())
        let first = try minted(await zonesList(reusable, token: "alice-1"))
        #expect(try minted(await zonesList(reusable, token: "alice-1")) == first)
        #expect(try minted(await zonesList(reusable, token: "bob-1")) != first, "another user's token")
        let rotated = try minted(await zonesList(reusable, token: first))
        #expect(rotated == first, "the same session, the same second")
        clock.advance(1)
        let later = try minted(await zonesList(reusable, token: first))
        #expect(later != first)
        let laterStatus = await zonesList(reusable, token: later).status, firstStatus = await zonesList(reusable, token: first).status
        #expect(laterStatus == 200 && firstStatus == 200)

        // More sessions in one second than the memory keeps: each still gets a working token of its own.
        let sessions = (0..<300).map { reusable.mintWebAuthToken(user: "alice", session: "s\($0)") }
        #expect(Set(sessions).count == 300)
        #expect(reusable.mintWebAuthToken(user: "alice", session: "s0") == sessions[0], "remembered: among the first 256")
        #expect(reusable.mintWebAuthToken(user: "alice", session: "s299") != sessions[299], "not remembered: past 256")
        #expect(reusable.mintWebAuthToken(user: "alice", session: "x", reusable: false) != reusable.mintWebAuthToken(user: "alice", session: "x", reusable: false))
        #expect(reusable.signedInUser(webToken: sessions[299])?.session == "s299")

        let singleUse = try service({ $0.users = [(name: "alice", token: "alice-1")]; $0.now = { clock.now }; $0.singleUseWebAuthTokens = true }, directory: directory())
        let one = try minted(await zonesList(singleUse, token: "alice-1"))
        let two = try minted(await zonesList(singleUse, token: one))
        let three = try minted(await zonesList(singleUse, token: two))
        #expect(Set([one, two, three]).count == 3, "each answer its own token, in the same second")
        #expect(await zonesList(singleUse, token: one).status == 421, "a spent token")
    }

    /// The value as sent (before percent-decoding; empty without `=`) of the last parameter whose
    /// name, decoded as `queryItems` decodes it, is `name`: the parameter whose value is used.
    func lastRawQueryValue(_ request: ServerRequest, _ name: String) -> Substring? {
        guard let query = request.query else { return nil }
        var found: Substring?
        ServerRequest.forEachQueryPair(query) { key, value in
            guard ServerRequest.decodedName(key) == name else { return }
            found = value.map { Substring($0) } ?? ""
        }
        return found
    }

    /// Every request's head is checked by the request policy before its body is read (a refused one
    /// is answered then, and its body dropped): the head check refuses exactly what the policy refuses
    /// with every header in hand, its shortcut for plain heads included.
    @Test func theHeadCheckRefusesWhatThePolicyRefuses() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let paths = [
            "/database/1/\(LiveServer.container)/development/public/records/query?ckAPIToken=x", "/admin/1/\(LiveServer.container)/development/reset",
            "/signin", "/ready", "/webcourier/1/abc",
        ]
        let hosts: [String?] = [nil, "127.0.0.1:8080", "localhost", "app.localhost:3000", "evil.example", "[::1]:80", "127.0.0.1.evil.example"]
        let origins: [String?] = [nil, "http://localhost:3000", "https://evil.example", "null", "http://127.0.0.1:8080"]
        let modes: [String?] = [nil, "navigate", "cors", "no-cors"]
        var refused = 0
        for path in paths {
            for host in hosts {
                for origin in origins {
                    for mode in modes {
                        for method in [HTTPRequest.Method.get, .post] {
                            var fields = HTTPFields()
                            fields[.contentType] = "text/plain"
                            if let origin { fields[.origin] = origin }
                            if let mode { fields[HTTPField.Name("Sec-Fetch-Mode")!] = mode }
                            let head = HTTPRequest(method: method, scheme: "http", authority: host, path: path, headerFields: fields)
                            let whole = ServerRequest(
                                method: method.rawValue, target: Substring(path), headers: LocalHTTPServer.headers(fields, authority: host), body: [])
                            let expected = server.service.requestPolicyRefusal(whole)?.status
                            let checked = LocalHTTPServer.policyRequest(head).flatMap(server.service.policyRefusalResponse)?.status
                            #expect(checked == expected, "\(method) \(path) Host \(host ?? "-") Origin \(origin ?? "-") mode \(mode ?? "-")")
                            if expected != nil { refused += 1 }
                        }
                    }
                }
            }
        }
        #expect(refused > 100, "the cases include refusals (\(refused))")
    }

    /// A query parameter's value as sent, before percent-decoding: the first whose name, as sent, is
    /// `name`.
    func rawQueryValue(_ request: ServerRequest, _ name: String) -> Substring? {
        guard let query = request.query else { return nil }
        var found: Substring?
        ServerRequest.forEachQueryPair(query) { key, value in
            guard found == nil, let value, key.elementsEqual(name.utf8) else { return }
            found = Substring(value)
        }
        return found
    }

    /// A request's query pairs and its `Host` header, read from their bytes on every request.
    @Test func queryPairsAndLoopbackHostsAreReadFromBytes() throws {
        func items(_ query: String) -> [String: String] {
            ServerRequest(method: "GET", path: "/", query: query, headers: [], body: []).queryItems
        }
        #expect(items("a=1&b=2") == ["a": "1", "b": "2"])
        #expect(items("=x&&a&b=1=2&a=3") == ["": "x", "a": "3", "b": "1=2"], "an empty name, an empty pair, a bare name, a later value wins")
        #expect(items("n%C3%A4me=v%C3%A4lue+x&bad=%ZZ&c+d=e") == ["näme": "välue+x", "bad": "", "c d": "e"])
        #expect(items("名前=値&x=") == ["名前": "値", "x": ""])
        #expect(items("&") == [:] && items("") == [:])
        let request = ServerRequest(method: "GET", path: "/", query: "ckWebAuthToken=a%2Bb&x=1&ckWebAuthToken=c", headers: [], body: [])
        #expect(rawQueryValue(request, "ckWebAuthToken") == "a%2Bb" && rawQueryValue(request, "x") == "1" && rawQueryValue(request, "y") == nil)
        #expect(request.credentials == ServerRequest.Credentials(apiToken: nil, webAuthToken: "c", rawWebAuthToken: "c"))
        // The raw token is the one used: a decoy before it, or its name percent-encoded, does not hide
        // a token sent with its `+ / =` unencoded (both passed the check once).
        for query in ["ckWebAuthToken=x&ckWebAuthToken=A+/=b", "ck%57ebAuthToken=A+/=b", "ckSession=x&ckSession=A+/=b"] {
            let credentials = ServerRequest(method: "GET", path: "/", query: query, headers: [], body: []).credentials
            #expect(credentials.webAuthToken == "A+/=b" && credentials.rawWebAuthToken.map(LocalCloudKit.hasUnencodedBase64) == true, "\(query)")
        }
        // The credentials' one pass reads what `queryItems` and `rawQueryValue` read, on queries made of
        // the parameters' names, aliases, escapes, repeats and malformed parts; and `queryItems` reads
        // what a plain split and `PercentEncoding` read (the server's own decoding takes shortcuts).
        func plainItems(_ query: String) -> [String: String] {
            var items: [String: String] = [:]
            for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
                let equals = pair.firstIndex(of: UInt8(ascii: "="))
                guard let name = PercentEncoding.decode(Substring(pair[..<(equals ?? pair.endIndex)]), plusAsSpace: true) else { continue }
                items[name] = equals.map { PercentEncoding.decode(Substring(pair[pair.index(after: $0)...]), plusAsSpace: false) ?? "" } ?? ""
            }
            return items
        }
        var random = SystemRandomNumberGenerator()
        let parts = ["ckAPIToken=a", "ckAPIToken=b%2B", "ckWebAuthToken=t+/=", "ckWebAuthToken=t%2B%2F%3D", "ckWebAuthToken=",
                     "ckWebAuthToken", "ckSession=s", "ckSession=%ZZ", "ck%57ebAuthToken=escaped", "ckWeb+AuthToken=x", "=v", "",
                     "ckAPIToken", "other=1", "ckSession=", "ckAPIToken=%E2%9C%93", "ckWebAuthToken=%", "ckAPIToken=välue+",
                     "ckSession=名前=値", "名前=値"]
        for _ in 0..<2_000 {
            let query = (0..<Int.random(in: 0...5, using: &random)).map { _ in parts.randomElement(using: &random)! }.joined(separator: "&")
            let request = ServerRequest(method: "GET", path: "/", query: query, headers: [], body: [])
            let items = request.queryItems
            #expect(items == plainItems(query), "\(query)")
            let expected = ServerRequest.Credentials(
                apiToken: items["ckAPIToken"], webAuthToken: items["ckWebAuthToken"] ?? items["ckSession"],
                rawWebAuthToken: lastRawQueryValue(request, "ckWebAuthToken") ?? lastRawQueryValue(request, "ckSession"))
            #expect(request.credentials == expected, "\(query)")
        }
        // Routes are remembered, and are the routes parsed; a path that fails is not remembered.
        let path = "/database/1/iCloud.x/development/private/records/query"
        let parsed = try Route(path: path, method: "POST"), remembered = try Route.cached(path: path, method: "POST")
        #expect(remembered.container == parsed.container && remembered.scope == parsed.scope && remembered.endpoint.operation == parsed.endpoint.operation)
        #expect(try Route.cached(path: path, method: "POST").endpoint.operation == "records/query")
        #expect(throws: ServiceError.self) { try Route.cached(path: "/database/1/iCloud.x/nowhere/private/records/query", method: "POST") }
        #expect(throws: ServiceError.self) { try Route.cached(path: "/database/1/iCloud.x/nowhere/private/records/query", method: "POST") }
        let long = "/database/1/iCloud.\(String(repeating: "a", count: Route.longestRemembered))/development/public/records/query"
        #expect(try Route.cached(path: long, method: "POST").container.count > Route.longestRemembered, "parsed, not remembered")
        for n in 0..<(Route.rememberedCount * 2) {
            #expect(try Route.cached(path: "/database/1/iCloud.n\(n)/development/public/records/query", method: "POST").container == "iCloud.n\(n)")
        }
        for host in ["127.0.0.1", "127.0.0.1:8080", "localhost", "localhost:1"] {
            #expect(LocalCloudKit.isLoopbackHostHeader(host), "\(host)")
        }
        for host in ["127.0.0.1:", "127.0.0.1:8a", "LOCALHOST:1", "127.0.0.10", "localhost.evil.example", "evil.example:80", "", ":80", "127.0.0.1:80:80"] {
            #expect(!LocalCloudKit.isLoopbackHostHeader(host), "\(host)")
        }
    }

    @Test func downloadURLsExpireAndFollowTheRecord() async throws {
        let clock = TestClock()
        let server = try await LiveServer.start(now: { clock.now })
        defer { Task { await server.stop() } }
        let db = server.client().database(.private)
        try await db.createZone("Files")
        let zone = ZoneID(zoneName: "Files")
        let (name, asset) = try await db.uploadAsset(Array("hello".utf8), recordType: "Doc", fieldName: "file", zoneID: zone)
        let saved = try await db.modify([.create(record(name, "Doc", ["file": .asset(asset)]))], zone: "Files")
        #expect(saved.isCompleteSuccess)
        func url() async throws -> String {
            let fetched = try await db.lookup(name, zone: "Files").record
            guard case .asset(let a)? = fetched?.fields["file"], let url = a.downloadURL else { throw CancellationError() }
            return url.replacingOccurrences(of: "${f}", with: "f.txt")
        }
        let first = try await url()
        #expect(try await server.raw(.get, String(first.dropFirst(server.url.count)), query: "").status == 200)
        clock.advance(61 * 60)
        #expect(try await server.raw(.get, String(first.dropFirst(server.url.count)), query: "").status == 403, "expired after an hour at most")
        let second = try await url()
        #expect(second != first, "a fetch after the half hour turned hands out a new URL (the answer cache does not keep the old one)")
        #expect(try await server.raw(.get, String(second.dropFirst(server.url.count)), query: "").status == 200)
        let tag = try await db.lookup(name, zone: "Files").record?.recordChangeTag
        _ = try await db.modify([.delete(recordName: name, recordChangeTag: tag)], zone: "Files")
        #expect(try await server.raw(.get, String(second.dropFirst(server.url.count)), query: "").status == 403, "the record is gone")
    }

    @Test func contentDispositionIsASafeFileName() {
        #expect(LocalCloudKit.contentDisposition(fileName: "../../etc/passwd") == "attachment; filename=\"passwd\"; filename*=UTF-8''passwd")
        let bidi = LocalCloudKit.contentDisposition(fileName: "evil\u{202E}txt.exe") ?? ""
        #expect(!bidi.unicodeScalars.contains("\u{202E}") && bidi.contains("filename=\"eviltxt.exe\""))
        #expect(LocalCloudKit.contentDisposition(fileName: "résumé.pdf")?.contains("filename*=UTF-8''r%C3%A9sum%C3%A9.pdf") == true)
        #expect(LocalCloudKit.contentDisposition(fileName: "${f}") == nil && LocalCloudKit.contentDisposition(fileName: "..") == nil)
    }

    @Test func namesSayWhatIsWrongWithThem() {
        #expect(LocalCloudKit.nameProblem("ok") == nil)
        #expect(LocalCloudKit.nameProblem("") == "it is empty")
        #expect(LocalCloudKit.nameProblem(String(repeating: "x", count: 256))?.contains("256 bytes") == true)
        #expect(LocalCloudKit.nameProblem("a\u{0}b") == "it holds the control character U+0000")
        #expect(LocalCloudKit.nameProblem("a\u{9B}b") == "it holds the control character U+009B")
        #expect(LocalCloudKit.quoted("a\u{1B}[2J") == "'a\\u{1b}[2J'")
    }
}
