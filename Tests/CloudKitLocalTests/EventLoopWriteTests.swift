import CloudKitLocal
import CloudKitWeb
import Foundation
import Testing

/// Writes answered on the event loop (`answersWritesOnEventLoop`, on with `serve --in-memory`): the
/// same answers as the full path gives, for successes, per-record errors, request errors and a fixture
/// reset; a caller the full path refuses, single-use tokens and a database's first write still go the
/// full path.
@Suite struct EventLoopWriteTests {
    static func start(onEventLoop: Bool, singleUse: Bool = false) async throws -> LiveServer {
        try await LiveServer.start(configure: {
            $0.answersWritesOnEventLoop = onEventLoop
            $0.singleUseWebAuthTokens = singleUse
        })
    }

    /// A request's answer with what differs between two servers taken out (tags, times, the
    /// request's uuid, the minted token): what a client decides on.
    static func shape(_ response: CloudKitWeb.HTTPResponse) throws -> String {
        var text = String(decoding: response.body, as: UTF8.self)
        for pattern in [#""recordChangeTag":"[^"]*""#, #""timestamp":[0-9]+"#, #""uuid":"[^"]*""#, #""[a-zA-Z]*Timestamp":\{[^}]*\}"#, #""zoneChangeTag":"[^"]*""#] {
            text = text.replacingOccurrences(of: pattern, with: "…", options: .regularExpression)
        }
        return "\(response.status) \(text)"
    }

    /// The same requests, one after another, against a server answering writes on the event loop and
    /// one answering them on the full path.
    @Test func theEventLoopAnswersWhatTheFullPathAnswers() async throws {
        var answers: [Bool: [String]] = [:]
        for onEventLoop in [false, true] {
            let server = try await Self.start(onEventLoop: onEventLoop)
            defer { Task { await server.stop() } }
            let zones = server.path("private", "zones/modify"), modify = server.path("private", "records/modify")
            var seen: [String] = []
            // The database's first write creates it: the full path, with either setting.
            seen.append(try Self.shape(await server.raw(.post, zones, body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Feed"}}}]}"#)))
            let first = server.service.answerCacheCounters.writtenSynchronously
            #expect(first == 0, "a database's first write is the full path's")
            let requests = [
                (modify, #"{"zoneID":{"zoneName":"Feed"},"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"Note","fields":{"v":{"value":1}}}},{"operationType":"create","record":{"recordName":"b","recordType":"Note","fields":{"v":{"value":2}}}}]}"#),
                // A conflict: a per-record error in a 200 answer.
                (modify, #"{"zoneID":{"zoneName":"Feed"},"operations":[{"operationType":"update","record":{"recordName":"a","recordType":"Note","recordChangeTag":"stale","fields":{"v":{"value":9}}}}]}"#),
                // An atomic batch refused whole.
                (modify, #"{"zoneID":{"zoneName":"Feed"},"atomic":true,"operations":[{"operationType":"create","record":{"recordName":"c","recordType":"Note"}},{"operationType":"create","record":{"recordName":"a","recordType":"Note"}}]}"#),
                // An unknown zone, malformed JSON, a wrong type: request errors.
                (modify, #"{"zoneID":{"zoneName":"Nope"},"operations":[{"operationType":"create","record":{"recordName":"x","recordType":"Note"}}]}"#),
                (modify, #"{"zoneID":{"zoneName":"Feed"},"operations":["#),
                (modify, #"{"zoneID":{"zoneName":"Feed"},"operations":"create"}"#),
                (server.path("private", "subscriptions/modify"), #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"s","subscriptionType":"zone","zoneID":{"zoneName":"Feed"}}}]}"#),
                (modify, #"{"zoneID":{"zoneName":"Feed"},"operations":[{"operationType":"forceDelete","record":{"recordName":"b"}}]}"#),
            ]
            for (path, body) in requests { seen.append(try Self.shape(await server.raw(.post, path, body: body))) }
            let written = server.service.answerCacheCounters.writtenSynchronously
            #expect(written == (onEventLoop ? requests.count : 0), "\(written) of \(requests.count) on the event loop")
            // What was written reads back the same.
            seen.append(try Self.shape(await server.raw(.post, server.path("private", "records/lookup"), body: #"{"zoneID":{"zoneName":"Feed"},"records":[{"recordName":"a"},{"recordName":"b"},{"recordName":"c"}]}"#)))
            // A stranger is refused by the full path, with its reason.
            let stranger = try await server.raw(.post, modify, query: "ckAPIToken=nope", body: requests[0].1)
            seen.append(try Self.shape(stranger))
            #expect(stranger.status == 401 || stranger.status == 403)
            // The reset answers what it deleted; the zone is gone after it.
            let reset = try await server.raw(.post, "/admin/1/\(LiveServer.container)/development/reset", query: "ckAPIToken=\(LiveServer.apiToken)")
            seen.append(try Self.shape(reset))
            #expect(reset.status == 200)
            seen.append(try Self.shape(await server.raw(.post, server.path("private", "records/lookup"), body: #"{"zoneID":{"zoneName":"Feed"},"records":[{"recordName":"a"}]}"#)))
            #expect(server.service.answerCacheCounters.writtenSynchronously == (onEventLoop ? requests.count + 1 : 0))
            answers[onEventLoop] = seen
        }
        let full = try #require(answers[false]), loop = try #require(answers[true])
        #expect(full.count == loop.count)
        for (a, b) in zip(full, loop) { #expect(a == b) }
        #expect(full[2].contains("CONFLICT"), "\(full[2])")
        #expect(full[3].contains("ATOMIC_ERROR"), "\(full[3])")
        #expect(full[4].contains("ZONE_NOT_FOUND"), "\(full[4])")
        #expect(full[5].hasPrefix("400") && full[6].hasPrefix("400"), "\(full[5]) \(full[6])")
        #expect(full[12].contains("NOT_FOUND") || full[12].contains("ZONE_NOT_FOUND"), "\(full[12])")
    }

    /// Single-use web auth tokens are spent, and given back on an error, by the full path only.
    @Test func singleUseTokensTakeTheFullPath() async throws {
        let server = try await Self.start(onEventLoop: true, singleUse: true)
        defer { Task { await server.stop() } }
        let modify = server.path("public", "records/modify")
        var token = LiveServer.alice.token
        for name in ["p", "q", "r"] {
            let answer = try await server.raw(
                .post, modify, query: "ckAPIToken=\(LiveServer.apiToken)&ckWebAuthToken=\(PercentEncoding.encodeQueryValue(token))",
                body: #"{"operations":[{"operationType":"create","record":{"recordName":"\#(name)","recordType":"Note"}}]}"#)
            #expect(answer.status == 200)
            token = try #require(answer.header("X-Apple-CloudKit-Web-Auth-Token"))
        }
        #expect(server.service.answerCacheCounters.writtenSynchronously == 0)
    }

    /// A public write is answered on the event loop once the database exists.
    @Test func aPublicWriteIsAnsweredOnTheEventLoop() async throws {
        let server = try await Self.start(onEventLoop: true)
        defer { Task { await server.stop() } }
        let modify = server.path("public", "records/modify")
        let query = "ckAPIToken=\(LiveServer.apiToken)&ckWebAuthToken=\(PercentEncoding.encodeQueryValue(LiveServer.alice.token))"
        let first = try await server.raw(.post, modify, query: query, body: #"{"operations":[{"operationType":"create","record":{"recordName":"p","recordType":"Note"}}]}"#)
        #expect(first.status == 200 && server.service.answerCacheCounters.writtenSynchronously == 0)
        let second = try await server.raw(.post, modify, query: query, body: #"{"operations":[{"operationType":"create","record":{"recordName":"q","recordType":"Note"}}]}"#)
        #expect(second.status == 200 && server.service.answerCacheCounters.writtenSynchronously == 1)
        #expect(second.header("X-Apple-Request-UUID") != nil && second.header("Content-Length") == String(second.body.count))
        guard case .array(let records)? = try JSON(parsing: second.body)["records"] else { Issue.record("no records"); return }
        #expect(records.first?["recordName"] == "q")
    }
}
