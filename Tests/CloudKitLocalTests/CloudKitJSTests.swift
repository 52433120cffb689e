import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

/// What Apple's CloudKit JS 2.6.4 sends and reads (issue 29, reference §11.1): the request/answer pairs
/// of `Fixtures/cloudkit-js-2.6.4.json`, each sent exactly as CloudKit JS sends it (its query
/// parameters, `text/plain` bodies, percent-encoded tokens) to a real loopback server, and checked for
/// what CloudKit JS reads from the answer. Below them, how our own client and browser read the same
/// answers.
@Suite struct CloudKitJSTests {
    static let clientID = "0d3b8f3e-6f55-4a5e-9c54-2b7c1f1e6a01"

    struct Fixture: Sendable {
        let common: JSON
        let cases: [JSON]
    }

    static let fixture: Fixture = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/cloudkit-js-2.6.4.json")
        let json = try! JSON(parsing: Array(try! Data(contentsOf: url)))
        guard case .array(let cases)? = json["cases"] else { fatalError("the fixture has no cases") }
        return Fixture(common: json["common"] ?? .null, cases: cases)
    }()

    static var caseNames: [String] { fixture.cases.compactMap { $0["name"]?.stringValue } }

    @Test(arguments: caseNames) func cloudKitJS(_ name: String) async throws {
        let testCase = try #require(Self.fixture.cases.first { $0["name"]?.stringValue == name })
        guard case .array(let steps)? = testCase["steps"], !steps.isEmpty else {
            Issue.record("\(name) has no steps")
            return
        }
        let singleUse = testCase["serve"]?["singleUseTokens"] == .bool(true)
        let server = try await LiveServer.start(configure: { $0.singleUseWebAuthTokens = singleUse })
        defer { Task { await server.stop() } }
        var values: [String: String] = [
            "container": LiveServer.container, "apiToken": LiveServer.apiToken, "clientId": Self.clientID,
            "alice": PercentEncoding.encodeQueryValue(LiveServer.alice.token), "bob": PercentEncoding.encodeQueryValue(LiveServer.bob.token),
        ]
        for (index, stepTemplate) in steps.enumerated() {
            let step = try JSON(parsing: Array(Self.substitute(stepTemplate.text, values).utf8))
            let label = "step \(index + 1)\(step["note"]?.stringValue.map { " (\($0))" } ?? "")"
            let request = try #require(step["request"])
            let method = CloudKitWeb.HTTPMethod(rawValue: request["method"]?.stringValue ?? "GET") ?? .get
            var pairs: [String] = []
            if step["bareURL"] != .bool(true) { pairs += Self.pairs(Self.fixture.common["query"]).map { Self.substitute($0, values) } }
            pairs += Self.pairs(request["query"])
            let body = request["body"].map(\.text)
            var headers: [(String, String)] = []
            if body != nil, case .object(let common)? = Self.fixture.common["bodyHeaders"] {
                headers += common.pairs.compactMap { pair in pair.value.stringValue.map { (pair.key, $0) } }
            }
            if case .object(let own)? = request["headers"] {
                headers.removeAll { header in own.pairs.contains { $0.key.lowercased() == header.0.lowercased() } }
                headers += own.pairs.compactMap { pair in pair.value.stringValue.map { (pair.key, Self.substitute($0, values)) } }
            }
            let formBody = request["form"]?.stringValue
            let path = request["path"]?.stringValue ?? ""
            let response: CloudKitWeb.HTTPResponse
            if path.hasPrefix("http") {
                let full = path + (pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&"))
                response = try await AsyncHTTPTransport().send(
                    CloudKitWeb.HTTPRequest(method: method, url: full, headers: headers.map { (name: $0.0, value: $0.1) }, body: body.map { Array($0.utf8) }, timeout: 20))
            } else {
                response = try await server.raw(method, path, query: pairs.joined(separator: "&"), body: formBody ?? body, headers: headers)
            }
            let raw = String(decoding: response.body, as: UTF8.self)
            let answer = (try? JSON(parsing: response.body)) ?? .null
            let said = "\(name), \(label): HTTP \(response.status) \(String(decoding: response.body.prefix(600), as: UTF8.self))"
            let expect = step["expect"] ?? .null
            if case .int(let status)? = expect["status"] { #expect(Int64(response.status) == status, "\(said)") }
            if case .array(let names)? = expect["headers"] {
                for header in names.compactMap(\.stringValue) { #expect(response.header(header) != nil, "\(said): header \(header)") }
            }
            if case .array(let names)? = expect["absentHeaders"] {
                for header in names.compactMap(\.stringValue) { #expect(response.header(header) == nil, "\(said): no header \(header)") }
            }
            if case .array(let texts)? = expect["bodyContains"] {
                for text in texts.compactMap(\.stringValue) { #expect(raw.contains(Self.substitute(text, values)), "\(said): the body should contain \(text)") }
            }
            if case .array(let texts)? = expect["bodyLacks"] {
                for text in texts.compactMap(\.stringValue) { #expect(!raw.contains(text), "\(said): the body should not contain \(text)") }
            }
            if case .object(let exact)? = expect["json"] {
                for pair in exact.pairs { #expect(Self.value(answer, pair.key).map { Self.same($0, pair.value) } == true, "\(said): \(pair.key) should be \(pair.value.text)") }
            }
            if case .object(let contains)? = expect["contains"] {
                for pair in contains.pairs {
                    let text = Self.value(answer, pair.key)?.stringValue ?? ""
                    #expect(text.contains(pair.value.stringValue ?? "\u{0}"), "\(said): \(pair.key) should contain \(pair.value.text)")
                }
            }
            if case .array(let paths)? = expect["present"] {
                for path in paths.compactMap(\.stringValue) { #expect(Self.value(answer, path) != nil, "\(said): \(path) should be present") }
            }
            if case .array(let paths)? = expect["absent"] {
                for path in paths.compactMap(\.stringValue) { #expect(Self.value(answer, path) == nil, "\(said): \(path) should be absent") }
            }
            if case .object(let counts)? = expect["count"] {
                for pair in counts.pairs {
                    guard case .array(let items)? = Self.value(answer, pair.key) else { Issue.record("\(said): \(pair.key) is not an array"); continue }
                    #expect(JSON.int(Int64(items.count)) == pair.value, "\(said): \(pair.key) count")
                }
            }
            if case .array(let pairsOfPaths)? = expect["same"] {
                for case .array(let two) in pairsOfPaths where two.count == 2 {
                    let a = Self.value(answer, two[0].stringValue ?? ""), b = Self.value(answer, two[1].stringValue ?? "")
                    #expect(a != nil && a == b, "\(said): \(two[0].text) and \(two[1].text) should be the same")
                }
            }
            if case .object(let captures)? = step["captureHeaders"] {
                for pair in captures.pairs {
                    values[pair.key] = try #require(response.header(pair.value.stringValue ?? ""), "\(said): no header \(pair.value.text) to capture")
                }
            }
            if case .object(let captures)? = step["captureBody"] {
                // The first group of a pattern in the raw body (an HTML page's form nonce, a script's token).
                for pair in captures.pairs {
                    let pattern = try Regex(pair.value.stringValue ?? "")
                    let match = try #require(raw.firstMatch(of: pattern), "\(said): nothing matches \(pair.value.text)")
                    values[pair.key] = try #require(match.output[1].substring.map(String.init))
                }
            }
            if case .object(let captures)? = step["capture"] {
                for pair in captures.pairs {
                    let captured = try #require(Self.value(answer, pair.value.stringValue ?? ""), "\(said): nothing to capture at \(pair.value.text)")
                    values[pair.key] = captured.stringValue ?? captured.text
                }
            }
        }
    }

    /// `${name}` replaced by its value.
    static func substitute(_ text: String, _ values: [String: String]) -> String {
        var text = text
        for (name, value) in values { text = text.replacingOccurrences(of: "${\(name)}", with: value) }
        return text
    }

    /// `[["k", "v"], …]` as `k=v` (values as the fixture writes them: already encoded for the wire).
    static func pairs(_ json: JSON?) -> [String] {
        guard case .array(let items)? = json else { return [] }
        return items.compactMap { item in
            guard case .array(let kv) = item, kv.count == 2, let k = kv[0].stringValue, let v = kv[1].stringValue else { return nil }
            return "\(k)=\(v)"
        }
    }

    /// The value at a dotted path (`records.0.fields.blob.type`), or nil.
    static func value(_ json: JSON, _ path: String) -> JSON? {
        var current: JSON? = json
        for part in path.split(separator: ".").map(String.init) {
            switch current {
            case .object(let object)?: current = object[part]
            case .array(let items)?: current = Int(part).flatMap { items.indices.contains($0) ? items[$0] : nil }
            default: return nil
            }
        }
        return current
    }

    /// Equal JSON, numbers compared by value (`2` and `2.0` alike).
    static func same(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)): return Double(x) == y
        default: return a == b
        }
    }

    // MARK: How our own client reads the same answers

    /// Item 2: `callerIdentity()` reads the top-level keys CloudKit JS reads, and the reference page's
    /// `users[0]` from a server that answers only that.
    @Test func ourClientReadsEitherCallerShape() async throws {
        let server = try await LiveServer.start()
        defer { Task { await server.stop() } }
        let me = try #require(try await server.client().database(.public).callerIdentity())
        #expect(me.userRecordName == LocalCloudKit.userRecordName(for: "alice") && me.nameComponents?.givenName == "alice")
        let identity = #"{"userRecordName":"_abc","nameComponents":{"givenName":"Ann"},"lookupInfo":{"emailAddress":"ann@example.com"}}"#
        let topLevel = try CallerIdentityResponse(json: JSON(parsing: Array(identity.utf8)))
        let reference = try CallerIdentityResponse(json: JSON(parsing: Array(#"{"users":[\#(identity)]}"#.utf8)))
        #expect(topLevel.identity?.userRecordName == "_abc" && topLevel.identity == reference.identity)
        #expect(try CallerIdentityResponse(json: JSON(parsing: Array(#"{"users":[]}"#.utf8))).identity == nil)
        // What the server writes has both.
        let written = CallerIdentityResponse(identity: reference.identity).json
        #expect(written["userRecordName"] == .string("_abc") && Self.value(written, "users.0.userRecordName") == .string("_abc"))
    }

    /// Item 3: our client may leave `shouldFetchRootRecord` out too; it decodes as false.
    @Test func aShortGUIDWithOnlyAValue() throws {
        let guid = try ShortGUID(json: JSON(parsing: Array(#"{"value":"9LjDWFssO3YvOTlOEhmNAyTmP"}"#.utf8)))
        #expect(guid.value == "9LjDWFssO3YvOTlOEhmNAyTmP" && !guid.shouldFetchRootRecord && guid.rootRecordDesiredKeys == nil)
    }

    /// Item 6: how the browser reads `dbs`. Marked pushes (this server) 0/1/2; unmarked pushes from
    /// Apple's service as CloudKit JS reads them (0 public; a query or zone push otherwise private, a
    /// database push's scope unknown); unmarked pushes from another server are an older ckbrowse
    /// serve's 1/2/3. Never a silent wrong guess: what is not certain stays nil.
    @Test func theBrowserReadsDbsByWhereThePushCameFrom() throws {
        func push(_ kind: String, _ dbs: Int, marked: Bool, from origin: PushNotification.Origin) throws -> PushNotification {
            let marker = marked ? #","ckbrowse":1"# : ""
            return try PushNotification(payload: JSON(parsing: Array(#"{"ck":{"nid":"n"\#(marker),"\#(kind)":{"dbs":\#(dbs),"sid":"s"}}}"#.utf8)), from: origin)
        }
        for origin in [PushNotification.Origin.appleService, .otherServer] {
            #expect(try push("qry", 0, marked: true, from: origin).database == .public)
            #expect(try push("qry", 1, marked: true, from: origin).database == .private)
            #expect(try push("met", 2, marked: true, from: origin).database == .shared)
            #expect(try push("qry", 1, marked: true, from: origin).databaseNumbering == .ckbrowse)
        }
        #expect(try push("qry", 0, marked: false, from: .appleService).database == .public)
        #expect(try push("qry", 1, marked: false, from: .appleService).database == .private)
        #expect(try push("fet", 2, marked: false, from: .appleService).database == .private)
        #expect(try push("met", 1, marked: false, from: .appleService).database == nil, "private or shared: unconfirmed on Apple's service")
        #expect(try push("qry", 1, marked: false, from: .otherServer).database == .public, "an older ckbrowse serve's public")
        #expect(try push("qry", 2, marked: false, from: .otherServer).database == .private)
        #expect(try push("met", 3, marked: false, from: .otherServer).database == .shared)
        #expect(try push("qry", 7, marked: true, from: .otherServer).database == nil && push("qry", 7, marked: true, from: .otherServer).databaseCode == 7)
        // The local server's pushes as our own client long-polls them.
        #expect(CloudKitClient(configuration: CloudKitConfiguration(container: "c"), credentials: .apiToken("t", webAuthToken: nil), transport: AsyncHTTPTransport()).pushOrigin == .appleService)
    }
}
