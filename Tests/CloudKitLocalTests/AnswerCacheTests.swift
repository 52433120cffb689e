import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

/// The answer cache (`AnswerCache`, `CachedAnswerHandler`): repeated reads are answered from memory,
/// but never with something a commit has changed, never to a caller the full path would refuse, and
/// never out of order on a connection.
@Suite struct AnswerCacheTests {
    static let changesBody = #"{"zoneID":{"zoneName":"Feed"},"resultsLimit":200}"#

    /// A server with 20 notes in the private zone Feed; `storingAnswers: false` keeps no answers
    /// (`--answer-cache-mb 0`).
    static func seeded(storingAnswers: Bool = true) async throws -> LiveServer {
        let server = try await LiveServer.start(configure: { if !storingAnswers { $0.answerCacheBytes = 0 } })
        let db = server.client().database(.private)
        try await db.createZone("Feed")
        _ = try await db.modify((0..<20).map { .create(record("r\($0)", ["v": .int64(Int64($0))])) }, zone: "Feed")
        return server
    }

    @Test func repeatedReadsComeFromTheCacheUntilSomethingIsCommitted() async throws {
        let server = try await Self.seeded()
        defer { Task { await server.stop() } }
        let path = server.path("private", "records/changes")
        let first = try await server.raw(.post, path, body: Self.changesBody)
        let hitsBefore = server.service.answerCacheCounters.hits
        let second = try await server.raw(.post, path, body: Self.changesBody)
        #expect(first.status == 200 && second.status == 200)
        #expect(digest(first.body) == digest(second.body))
        #expect(server.service.answerCacheCounters.hits == hitsBefore + 1)
        // A hit is a full answer: its own request UUID and a minted web auth token (within one second
        // the same one: TrustBoundaryTests.mintedTokensAreSharedWithinASecondUnlessSingleUse).
        #expect(first.header("X-Apple-Request-UUID") != second.header("X-Apple-Request-UUID"))
        let minted = try #require(second.header("X-Apple-CloudKit-Web-Auth-Token"))
        #expect(minted != LiveServer.alice.token && first.header("X-Apple-CloudKit-Web-Auth-Token") != nil)
        #expect(second.header("Content-Length") == String(second.body.count))
        // The minted token works, and is itself answered from the cache.
        let withMinted = try await server.raw(
            .post, path, query: "ckAPIToken=\(LiveServer.apiToken)&ckWebAuthToken=\(PercentEncoding.encodeQueryValue(minted))", body: Self.changesBody)
        #expect(withMinted.status == 200 && digest(withMinted.body) == digest(first.body))
        #expect(server.service.answerCacheCounters.hits == hitsBefore + 2)

        // A commit: the next answer is computed again and shows it.
        let db = server.client().database(.private)
        let r3 = try await db.lookup("r3", zone: "Feed")
        _ = try await db.modify([.update(record("r3", tag: r3.record?.recordChangeTag, ["v": .int64(333)]))], zone: "Feed")
        let hitsAfterWrite = server.service.answerCacheCounters.hits
        let third = try await server.raw(.post, path, body: Self.changesBody)
        #expect(digest(third.body) != digest(first.body))
        let text = String(decoding: third.body, as: UTF8.self)
        #expect(text.contains("333"), "the new value is missing from a \(text.count)-byte page")
        #expect(server.service.answerCacheCounters.hits == hitsAfterWrite, "the write made the cached page stale")
    }

    /// Without stored answers, a page is computed on the event loop once the caller's tokens are
    /// known: the same bytes as the full path, an error still answered by the full path, and a
    /// caller the full path would refuse never answered there.
    @Test func pagesAreComputedOnTheEventLoopWhenTheCallerIsKnown() async throws {
        let server = try await Self.seeded(storingAnswers: false)
        defer { Task { await server.stop() } }
        let path = server.path("private", "records/changes")
        let full = try await server.raw(.post, path, body: Self.changesBody)
        let before = server.service.answerCacheCounters.computedSynchronously
        let synchronous = try await server.raw(.post, path, body: Self.changesBody)
        #expect(server.service.answerCacheCounters.computedSynchronously == before + 1)
        #expect(full.status == 200 && synchronous.status == 200 && digest(full.body) == digest(synchronous.body))
        #expect(synchronous.header("X-Apple-CloudKit-Web-Auth-Token") != nil && synchronous.header("Content-Length") == String(synchronous.body.count))
        let missing = try await server.raw(.post, path, body: #"{"zoneID":{"zoneName":"Nope"}}"#)
        let missingBody = try JSON(parsing: missing.body)
        #expect(missing.status == 404 && missingBody["serverErrorCode"] == "ZONE_NOT_FOUND")
        let stranger = try await server.raw(.post, path, query: "ckAPIToken=nope&ckWebAuthToken=x", body: Self.changesBody)
        #expect(stranger.status == 401)
        #expect(server.service.answerCacheCounters.computedSynchronously == before + 1, "neither was answered on the event loop")
        #expect(server.service.answerCacheCounters.hits == 0, "no answer was stored")
    }

    /// A query SQLite pages row for row (one zone, sorted by a record time, no filter or one the query
    /// index decides exactly) is computed on the event loop; one that must read every candidate (here
    /// zone-wide over two zones) takes the full path. All answer the same records.
    @Test func queriesThatSQLitePagesAreComputedOnTheEventLoop() async throws {
        let server = try await Self.seeded(storingAnswers: false)
        defer { Task { await server.stop() } }
        try await server.service.addSystemIndexes(container: LiveServer.container, environment: .development)
        let path = server.path("private", "records/query")
        let sorted = #"{"zoneID":{"zoneName":"Feed"},"query":{"recordType":"Note","sortBy":[{"systemFieldName":"createdTimestamp","ascending":false}]}}"#
        let filtered = #"{"zoneID":{"zoneName":"Feed"},"query":{"recordType":"Note","filterBy":[{"systemFieldName":"recordName","comparator":"NOT_EQUALS","fieldValue":{"value":{"recordName":"nobody"},"type":"REFERENCE"}}],"sortBy":[{"systemFieldName":"createdTimestamp","ascending":false}]}}"#
        _ = try await server.raw(.post, server.path("private", "records/changes"), body: Self.changesBody)  // the caller becomes known
        let before = server.service.answerCacheCounters.computedSynchronously
        let bySQLite = try await server.raw(.post, path, body: sorted)
        #expect(server.service.answerCacheCounters.computedSynchronously == before + 1)
        let byIndex = try await server.raw(.post, path, body: filtered)
        #expect(server.service.answerCacheCounters.computedSynchronously == before + 2, "a filter the index decides exactly costs a page too")
        let zoneWide = #"{"zoneWide":true,"query":{"recordType":"Note","sortBy":[{"systemFieldName":"createdTimestamp","ascending":false}]}}"#
        let byMatcher = try await server.raw(.post, path, body: zoneWide)
        #expect(server.service.answerCacheCounters.computedSynchronously == before + 2, "a query over two zones is not answered on the event loop")
        #expect(bySQLite.status == 200 && byIndex.status == 200 && byMatcher.status == 200)
        #expect(digest(bySQLite.body) == digest(byIndex.body) && digest(bySQLite.body) == digest(byMatcher.body))
        guard case .array(let records)? = try JSON(parsing: bySQLite.body)["records"] else { Issue.record("no records"); return }
        #expect(records.count == 20)
        #expect(records.first?["zoneID"]?["zoneName"] == "Feed")
    }

    @Test func aCommitByAnotherConnectionToTheSameFileIsSeen() async throws {
        let server = try await Self.seeded()
        defer { Task { await server.stop() } }
        let path = server.path("private", "records/changes")
        let before = try await server.raw(.post, path, body: Self.changesBody)
        _ = try await server.raw(.post, path, body: Self.changesBody)
        // A second service on the same directory stands for another process (another `serve`, or the
        // embedded demo): its commits do not pass through this server's write path.
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = [LiveServer.apiToken]
        configuration.users = [LiveServer.alice]
        let other = try LocalCloudKit(store: try Store(directory: server.directory), configuration: configuration)
        let client = CloudKitClient(
            configuration: CloudKitConfiguration(serverURL: "http://in-process", container: LiveServer.container),
            credentials: .apiToken(LiveServer.apiToken, webAuthToken: LiveServer.alice.token), transport: InProcessTransport(service: other))
        _ = try await client.database(.private).modify([.create(record("fromElsewhere"))], zone: "Feed")
        let after = try await server.raw(.post, path, body: Self.changesBody)
        #expect(digest(after.body) != digest(before.body))
        let text = String(decoding: after.body, as: UTF8.self)
        #expect(text.contains("fromElsewhere"), "the other connection's record is missing from a \(text.count)-byte page")
    }

    @Test func aHitStillNeedsValidTokensAndStaysWithItsUser() async throws {
        let server = try await Self.seeded()
        defer { Task { await server.stop() } }
        let path = server.path("private", "records/changes")
        _ = try await server.raw(.post, path, body: Self.changesBody)
        _ = try await server.raw(.post, path, body: Self.changesBody)
        let aliceToken = PercentEncoding.encodeQueryValue(LiveServer.alice.token)
        let wrongAPI = try await server.raw(.post, path, query: "ckAPIToken=nope&ckWebAuthToken=\(aliceToken)", body: Self.changesBody)
        #expect(wrongAPI.status == 401)
        let wrongWeb = try await server.raw(.post, path, query: "ckAPIToken=\(LiveServer.apiToken)&ckWebAuthToken=forged", body: Self.changesBody)
        #expect(wrongWeb.status == 421)
        let noUser = try await server.raw(.post, path, query: "ckAPIToken=\(LiveServer.apiToken)", body: Self.changesBody)
        #expect(noUser.status == 421)
        // Bob asks the same question of his own private database: no Feed zone there.
        let bob = try await server.raw(
            .post, path, query: "ckAPIToken=\(LiveServer.apiToken)&ckWebAuthToken=\(LiveServer.bob.token)", body: Self.changesBody)
        #expect(bob.status == 404 || bob.status == 400)
        #expect(!String(decoding: bob.body, as: UTF8.self).contains("\"r1\""))
        // A minted token with a forged MAC is refused even though alice's answer is cached.
        let good = try #require(try await server.raw(.post, path, body: Self.changesBody).header("X-Apple-CloudKit-Web-Auth-Token"))
        let forged = String(good.dropLast(2)) + (good.hasSuffix("AA") ? "BB" : "AA")
        let refused = try await server.raw(
            .post, path, query: "ckAPIToken=\(LiveServer.apiToken)&ckWebAuthToken=\(PercentEncoding.encodeQueryValue(forged))", body: Self.changesBody)
        #expect(refused.status == 421)
    }

    /// Read-your-writes with the cache in the way: four writers, each reading its record back (a
    /// cacheable lookup, asked in the same words every time) right after every acknowledged update.
    @Test func everyAcknowledgedWriteIsSeenByTheNextRead() async throws {
        let server = try await Self.seeded()
        defer { Task { await server.stop() } }
        let lookup = server.path("private", "records/lookup")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let db = server.client().database(.private)
                    let name = "r\(writer)"
                    var tag = try await db.lookup(name, zone: "Feed").record?.recordChangeTag
                    var stale = 0
                    for round in 1...25 {
                        let value = Int64(writer * 1000 + round)
                        let saved = try await db.modify([.update(record(name, tag: tag, ["v": .int64(value)]))], zone: "Feed").results[0].record
                        tag = saved?.recordChangeTag
                        let body = #"{"zoneID":{"zoneName":"Feed"},"records":[{"recordName":"\#(name)"}]}"#
                        let read = try await server.raw(.post, lookup, body: body)
                        if !String(decoding: read.body, as: UTF8.self).contains(#""value":\#(value),"#) { stale += 1 }
                    }
                    return stale
                }
            }
            var stale = 0
            for try await count in group { stale += count }
            #expect(stale == 0, "reads that missed an acknowledged write")
        }
        #expect(server.service.answerCacheCounters.stored > 0)
    }

    /// `seeded()` with the Feed page asked for once (so it is cached): the server, the page's path, and
    /// alice's credentials as a query.
    static func seededWithCachedPage() async throws -> (server: LiveServer, changes: String, query: String) {
        let server = try await Self.seeded()
        let changes = server.path("private", "records/changes")
        _ = try await server.raw(.post, changes, body: Self.changesBody)
        let query = "ckAPIToken=\(LiveServer.apiToken)&ckWebAuthToken=\(PercentEncoding.encodeQueryValue(LiveServer.alice.token))"
        return (server, changes, query)
    }

    /// A request as its bytes on the wire: HTTP/1.1, a JSON body (possibly empty).
    static func wire(_ method: String, _ target: String, _ body: String = "") -> String {
        "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// Pipelined on one connection: a request the cache cannot answer, then one it can. The cached
    /// answer must wait for the first one's.
    @Test func pipelinedAnswersKeepTheOrderOfRequests() async throws {
        let (server, changes, query) = try await Self.seededWithCachedPage()
        defer { Task { await server.stop() } }
        let lookup = server.path("private", "records/lookup")
        let lookupBody = #"{"zoneID":{"zoneName":"Feed"},"records":[{"recordName":"r7"}]}"#
        func request(_ path: String, _ body: String) -> String { Self.wire("POST", "\(path)?\(query)", body) }
        let text = request(lookup, lookupBody) + request(changes, Self.changesBody) + request(lookup, lookupBody)
        let port = server.port
        let responses = try await RawConnection.offThePool { try RawConnection.exchange(port: port, Array(text.utf8), responses: 3) }
        #expect(responses.count == 3)
        #expect(responses.map { $0.contains("\"recordName\":\"r7\"") && !$0.contains("\"r8\"") } == [true, false, true])
        #expect(responses[1].contains("\"syncToken\""))
    }

    /// An answer made on the event loop goes past the pipeline's events to NIO's encoder
    /// (`DirectAnswerWriter`), which pairs each answer with its request's method and leaves the body out
    /// of an answer to HEAD. Sent in turn on one connection (so the event loop answers every request it
    /// can): HEAD /ready (the full path answers HEAD), GET /ready and a cached page (both answered on
    /// the event loop), HEAD again, a refused request (full path), the page, GET, HEAD. Had an answer
    /// made on the event loop skipped the encoder, the encoder would pair the next answer with the
    /// method before it: the HEAD answer after it would carry a body.
    @Test func answersOnTheEventLoopKeepEachRequestsMethod() async throws {
        let (server, changes, query) = try await Self.seededWithCachedPage()
        defer { Task { await server.stop() } }
        func request(_ method: String, _ target: String, _ body: String = "") -> [UInt8] { Array(Self.wire(method, target, body).utf8) }
        let page = request("POST", "\(changes)?\(query)", Self.changesBody)
        let requests = [
            request("HEAD", "/ready"), request("GET", "/ready"), page, request("HEAD", "/ready"),
            request("POST", "\(changes)?ckAPIToken=unknown", Self.changesBody), page, request("GET", "/ready"), request("HEAD", "/ready"),
        ]
        let port = server.port
        let answers = try await RawConnection.offThePool {
            try RawConnection.exchange(port: port, requests: requests, responses: requests.count, bodiless: [0, 3, 7])
        }
        #expect(answers.count == 8)
        #expect(answers[0] == "" && answers[3] == "" && answers[7] == "", "no body in an answer to HEAD")
        #expect(answers[1] == #"{"ready":true}"# && answers[6] == answers[1])
        #expect(answers[2].contains("\"syncToken\"") && answers[2] == answers[5], "the page, whole, both times")
        #expect(answers[4].contains("\"serverErrorCode\""), "an unknown token's refusal, from the full path")
    }

    /// A request that ends its connection gets its answer, then the connection closes: HTTP/1.0 without
    /// `keep-alive`, and `Connection` tokens in any case and list (RFC 9112 §9.3, §9.6), on the paths
    /// the event loop answers (`/ready`, a cached page) and on the full path (a 404). swift-http-types
    /// keeps no version and both paths compared the whole value with `close`: each of these answered
    /// and then left the connection open (found by hand with a socket, 2026-12-06).
    @Test func requestsThatEndTheirConnectionEndIt() async throws {
        let (server, changes, query) = try await Self.seededWithCachedPage()
        defer { Task { await server.stop() } }
        let body = Self.changesBody
        func request(_ line: String, _ headers: String, _ body: String = "") -> [UInt8] {
            Array("\(line)\r\nHost: 127.0.0.1\r\n\(headers)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        }
        let ending: [(String, [UInt8])] = [
            ("GET /ready, HTTP/1.0", request("GET /ready HTTP/1.0", "")),
            ("GET /ready, keep-alive, close", request("GET /ready HTTP/1.1", "Connection: keep-alive, close\r\n")),
            ("GET /ready, Close", request("GET /ready HTTP/1.1", "Connection: Close\r\n")),
            ("the cached page, HTTP/1.0", request("POST \(changes)?\(query) HTTP/1.0", "", body)),
            ("the cached page, close", request("POST \(changes)?\(query) HTTP/1.1", "Connection: close\r\n", body)),
            ("a 404, HTTP/1.0", request("GET /nowhere HTTP/1.0", "")),
        ]
        for (name, bytes) in ending {
            let port = server.port
            let (answer, closed) = try await RawConnection.offThePool { try RawConnection.untilClosed(port: port, bytes) }
            #expect(answer.hasPrefix("HTTP/1.1 200 ") || (name.hasPrefix("a 404") && answer.hasPrefix("HTTP/1.1 404 ")), "\(name): \(answer.prefix(60))")
            #expect(closed, "\(name): the connection stayed open after the answer")
        }
        // Keep-alive requests keep it: a second request on the same connection is answered.
        for (name, headers, version) in [("HTTP/1.1", "", "HTTP/1.1"), ("HTTP/1.0 keep-alive", "Connection: Keep-Alive\r\n", "HTTP/1.0")] {
            let page = request("POST \(changes)?\(query) \(version)", headers, body)
            let port = server.port
            let answers = try await RawConnection.offThePool { try RawConnection.exchange(port: port, requests: [page, page], responses: 2) }
            #expect(answers.count == 2 && answers[0] == answers[1] && answers[0].contains("\"syncToken\""), "\(name)")
        }
    }
}

/// Short enough to read in a failed expectation.
func digest(_ bytes: [UInt8]) -> String { "\(bytes.count) bytes, hash \(bytes.hashValue)" }

/// A blocking loopback socket that sends bytes as they are and reads HTTP/1.1 responses with a
/// Content-Length (no chunking: the server sends lengths).
enum RawConnection {
    struct Failure: Error { var what: String }

    /// Runs blocking socket work on a Dispatch thread. A test's `recv` on Swift's cooperative pool (two
    /// threads on a 2-core machine) starves every server in the test process whose answers need the
    /// pool, its own included: answers then time out across unrelated tests.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    static func exchange(port: Int, _ bytes: [UInt8], responses count: Int) throws -> [String] {
        try exchange(port: port, requests: [bytes], responses: count)
    }

    /// Sends `requests[k]` once `k` answers have arrived: one element holding several requests
    /// pipelines them, one request an element sends them in turn. `bodiless`: the answers (by position)
    /// that announce a length but carry no body (to HEAD).
    static func exchange(port: Int, requests: [[UInt8]], responses count: Int, bodiless: Set<Int> = []) throws -> [String] {
        let fd = try connected(port: port, timeoutSeconds: 20)
        defer { close(fd) }
        var received: [UInt8] = []
        var answers: [String] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var sent = 0
        while answers.count < count {
            if sent < requests.count, answers.count >= sent {
                let bytes = requests[sent]
                guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else { throw Failure(what: "send") }
                sent += 1
            }
            // Take every complete response already received.
            while let headerEnd = find(Array("\r\n\r\n".utf8), in: received) {
                let head = String(decoding: received[..<headerEnd], as: UTF8.self)
                // Every answer starts where the one before it ended: bytes a HEAD answer should not
                // have carried would sit in front of the next status line.
                guard head.hasPrefix("HTTP/1.1 ") else { throw Failure(what: "answer \(answers.count) starts with \(head.prefix(40))") }
                guard let lengthLine = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                    let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
                else { throw Failure(what: "no content-length in \(head)") }
                let total = headerEnd + 4 + (bodiless.contains(answers.count) ? 0 : length)
                guard received.count >= total else { break }
                answers.append(String(decoding: received[(headerEnd + 4)..<total], as: UTF8.self))
                received.removeFirst(total)
            }
            if answers.count >= count { break }
            if sent < requests.count, answers.count >= sent { continue }  // the next request's turn
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw Failure(what: "connection ended after \(answers.count) answers") }
            received += chunk[..<n]
        }
        return answers
    }

    /// Sends `bytes`, then reads until the server closes the connection (true) or 10 s pass without
    /// a byte (false); the bytes read, as text.
    static func untilClosed(port: Int, _ bytes: [UInt8]) throws -> (String, Bool) {
        let fd = try connected(port: port, timeoutSeconds: 10)
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else { throw Failure(what: "send") }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if n < 0 { return (String(decoding: received, as: UTF8.self), false) }
            received += chunk[..<n]
        }
    }

    /// A blocking socket connected to 127.0.0.1:`port`, whose reads give up after `timeoutSeconds`.
    static func connected(port: Int, timeoutSeconds: Int) throws -> Int32 {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(what: "socket") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(what: "connect")
        }
        return fd
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
