import CloudKitWeb
import Crypto
import Foundation
import Testing

@Suite struct RequestBuildingTests {
    let base = "https://api.apple-cloudkit.com/database/1/iCloud.com.example.Notes/development"

    @Test func pathsMethodsAndQueryItems() async throws {
        let t = ScriptedTransport(json: Array(repeating: (200, #"{"zones":[]}"#), count: 3) + [(200, #"{"subscriptions":[]}"#)])
        let client = makeClient(t, credentials: .apiToken("tok+/=", webAuthToken: "web+/=abc"))
        _ = try await client.database(.private).listZones()
        _ = try await client.database(.public).lookupZones([ZoneID(zoneName: "Notes")])
        _ = try await client.database(.shared).modifyZones([ZoneOperation(.create, ZoneID(zoneName: "Z"))])
        _ = try await client.database(.private).listSubscriptions()
        let r = t.requests
        #expect(r[0].method == .get && r[0].body == nil)
        #expect(r[0].url == base + "/private/zones/list?ckAPIToken=tok%2B%2F%3D&ckWebAuthToken=web%2B%2F%3Dabc")
        #expect(queryItems(r[0].url) == ["ckAPIToken": "tok+/=", "ckWebAuthToken": "web+/=abc"])
        #expect(r[1].method == .post && r[1].path.hasSuffix("/public/zones/lookup"))
        #expect(try JSON(parsing: r[1].body!) == ["zones": [["zoneName": "Notes"]]])
        #expect(r[1].header("Content-Type") == "application/json")
        #expect(r[2].path.hasSuffix("/shared/zones/modify"))
        #expect(try JSON(parsing: r[2].body!) == ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Z"]]]]])
        #expect(r[3].method == .get && r[3].path.hasSuffix("/private/subscriptions/list"))
    }

    @Test func modifyBodyIsExact() async throws {
        let t = ScriptedTransport(json: [(200, #"{"records":[{"recordName":"a","recordType":"T","recordChangeTag":"2","fields":{}},{"recordName":"b","deleted":true}]}"#)])
        let db = makeClient(t).database(.private)
        var record = Record(recordName: "a", recordType: "T", recordChangeTag: "1")
        record.fields = ["n": .int64(5)]
        let result = try await db.modifyRecords(
            ModifyRecordsRequest(
                operations: [.update(record), .delete(recordName: "b", recordChangeTag: "9")],
                zoneID: ZoneID(zoneName: "Gallery"), atomic: true))
        #expect(result.isCompleteSuccess && result.results[1] == .deleted(recordName: "b", zoneID: nil))
        let body = try JSON(parsing: t.requests[0].body!)
        let expected: JSON = [
            "operations": [
                ["operationType": "update", "record": ["recordName": "a", "recordType": "T", "recordChangeTag": "1", "fields": ["n": ["value": 5, "type": "INT64"]]]],
                ["operationType": "delete", "record": ["recordName": "b", "recordChangeTag": "9"]],
            ],
            "zoneID": ["zoneName": "Gallery"], "atomic": true,
        ]
        #expect(body.isEquivalent(to: expected), "\(body.prettyPrinted())")
        #expect(t.requests[0].path.hasSuffix("/private/records/modify"))
    }

    @Test func everyEndpointUsesItsPathAndMethod() async throws {
        let t = ScriptedTransport(json: [
            (200, #"{"zones":[],"syncToken":"t","moreComing":false}"#),
            (200, #"{"zones":[]}"#),
            (200, #"{"records":[],"syncToken":"t","moreComing":false}"#),
            (200, #"{"records":[]}"#),
            (200, #"{"records":[]}"#),
            (200, #"{"subscriptions":[]}"#),
            (200, #"{"subscriptions":[]}"#),
            (200, #"{"userRecordName":"_u"}"#),
            (200, #"{"apnsEnvironment":"development","apnsToken":"x","webcourierURL":"https://w"}"#),
            (200, ""),
        ])
        let client = makeClient(t)
        let db = client.database(.private)
        _ = try await db.databaseChanges(syncToken: "s", resultsLimit: 5)
        _ = try await db.zoneChanges(ZoneChangesRequest(zones: [ZoneChangesEntry(zoneID: ZoneID(zoneName: "Z"))]))
        _ = try await db.recordChanges(RecordChangesRequest(zoneID: ZoneID(zoneName: "Z")))
        _ = try await db.query(QueryRequest(query: Query(recordType: "T")))
        _ = try await db.lookupRecords(["a"])
        _ = try await db.lookupSubscriptions(["s"])
        _ = try await db.modifySubscriptions([.delete("s")])
        _ = try await client.database(.public).currentUser()
        let token = try await client.createToken(apnsEnvironment: .development)
        try await client.registerToken(token)
        let paths = t.requests.map { "\($0.method.rawValue) \($0.path)" }
        #expect(paths == [
            "POST /database/1/iCloud.com.example.Notes/development/private/changes/database",
            "POST /database/1/iCloud.com.example.Notes/development/private/changes/zone",
            "POST /database/1/iCloud.com.example.Notes/development/private/records/changes",
            "POST /database/1/iCloud.com.example.Notes/development/private/records/query",
            "POST /database/1/iCloud.com.example.Notes/development/private/records/lookup",
            "POST /database/1/iCloud.com.example.Notes/development/private/subscriptions/lookup",
            "POST /database/1/iCloud.com.example.Notes/development/private/subscriptions/modify",
            "GET /database/1/iCloud.com.example.Notes/development/public/users/current",
            "POST /device/1/iCloud.com.example.Notes/development/tokens/create",
            "POST /device/1/iCloud.com.example.Notes/development/tokens/register",
        ])
        #expect(try JSON(parsing: t.requests[6].body!) == ["operations": [["operationType": "delete", "subscription": ["subscriptionID": "s"]]]])
        #expect(try JSON(parsing: t.requests[0].body!) == ["syncToken": "s", "resultsLimit": 5])
    }

    @Test func wrongDatabaseAndTooManyOperationsAreRefusedBeforeSending() async throws {
        let t = ScriptedTransport([])
        let client = makeClient(t)
        await #expect(throws: CloudKitError.self) { try await client.database(.public).recordChanges(RecordChangesRequest(zoneID: .default)) }
        let ops = (0..<201).map { RecordOperation.forceDelete(recordName: "r\($0)") }
        await #expect {
            try await client.database(.private).modifyRecords(ModifyRecordsRequest(operations: ops))
        } throws: { "\($0)".contains("at most 200") }
        await #expect {
            try await client.database(.private).modifyRecords(ModifyRecordsRequest(operations: [.forceDelete(recordName: "x"), .forceDelete(recordName: "x")]))
        } throws: { "\($0)".contains("more than one operation") }
        #expect(t.requests.isEmpty)
    }

    @Test func serverToServerRequestsAreSignedAndVerify() async throws {
        let t = ScriptedTransport(json: [(200, #"{"records":[]}"#), (200, #"{"zones":[]}"#)])
        let key = try ServerToServerKey(keyID: "KEYID", pem: SigningTests.privatePEM)
        let client = makeClient(t, credentials: .serverToServer(key))
        _ = try await client.database(.public).query(QueryRequest(query: Query(recordType: "Note"), resultsLimit: 10))
        _ = try await client.database(.public).listZones()
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: SigningTests.publicPEM)
        for request in t.requests {
            #expect(!request.url.contains("?"), "S2S requests carry no query parameters")
            #expect(request.header("X-Apple-CloudKit-Request-KeyID") == "KEYID")
            let date = try #require(request.header("X-Apple-CloudKit-Request-ISO8601Date"))
            #expect(date == "2024-03-01T12:00:00Z")
            let message = ServerToServerKey.stringToSign(date: date, body: request.body, subpath: request.path)
            let signature = try P256.Signing.ECDSASignature(
                derRepresentation: Data(base64Encoded: request.header("X-Apple-CloudKit-Request-SignatureV1")!)!)
            #expect(publicKey.isValidSignature(signature, for: Array(message.utf8)))
        }
        #expect(t.requests[1].body == nil)
    }

    @Test func rotatedWebAuthTokensAreAdopted() async throws {
        let rotated = LockedBox<[String]>([])
        let t = ScriptedTransport([
            { _ in HTTPResponse(status: 200, headers: [("X-Apple-CloudKit-Web-Auth-Token", "second+")], body: Array(#"{"zones":[]}"#.utf8)) },
            { _ in HTTPResponse(status: 429, headers: [("X-Apple-CloudKit-Session", "third")], body: Array(#"{"serverErrorCode":"THROTTLED","retryAfter":1}"#.utf8)) },
            { _ in HTTPResponse(status: 200, body: Array(#"{"zones":[]}"#.utf8)) },
        ])
        let client = makeClient(t, credentials: .apiToken("api", webAuthToken: "first"), onRotate: { token in rotated.mutate { list, _ in list.append(token) } })
        _ = try await client.database(.private).listZones()
        _ = try await client.database(.private).listZones()
        #expect(queryItems(t.requests[0].url)["ckWebAuthToken"] == "first")
        #expect(queryItems(t.requests[1].url)["ckWebAuthToken"] == "second+")
        #expect(queryItems(t.requests[2].url)["ckWebAuthToken"] == "third", "a token rotated on a 429 is used for the retry")
        #expect(await client.webAuthToken == "third")
        #expect(rotated.value == ["second+", "third"])
    }
}

@Suite struct ErrorAndRetryTests {
    @Test func authenticationRequiredCarriesRedirectURL() async throws {
        let t = ScriptedTransport(json: [(421, #"{"uuid":"u1","serverErrorCode":"AUTHENTICATION_REQUIRED","reason":"request needs authorization","redirectURL":"https://idmsa.apple.com/signin"}"#)])
        let client = makeClient(t)
        do {
            _ = try await client.database(.private).listZones()
            Issue.record("expected an error")
        } catch let error as CloudKitError {
            #expect(error.isAuthenticationRequired && error.httpStatus == 421)
            #expect(error.redirectURL == "https://idmsa.apple.com/signin" && error.uuid == "u1")
            #expect(error.operation == "zones/list")
            #expect(error.description.contains("AUTHENTICATION_REQUIRED") && error.description.contains("https://idmsa.apple.com/signin"))
        }
    }

    @Test func descriptionsNeverContainTokens() async throws {
        let t = ScriptedTransport(json: [(400, #"{"serverErrorCode":"BAD_REQUEST","reason":"token secret-api-token and secret%2Bweb were bad"}"#)])
        let client = makeClient(t, credentials: .apiToken("secret-api-token", webAuthToken: "secret+web"))
        do {
            _ = try await client.database(.private).listZones()
        } catch {
            let text = "\(error)"
            #expect(text.contains("BAD_REQUEST") && text.contains("<redacted>"))
            #expect(!text.contains("secret-api-token") && !text.contains("secret%2Bweb") && !text.contains("secret+web"))
        }
    }

    @Test func throttledIsRetriedAfterRetryAfter() async throws {
        let sleeper = RecordingSleeper()
        let t = ScriptedTransport(json: [
            (429, #"{"serverErrorCode":"THROTTLED","retryAfter":3}"#),
            (503, #"{"serverErrorCode":"TRY_AGAIN_LATER"}"#),
            (503, "<html>busy</html>"),
            (200, #"{"zones":[]}"#),
        ])
        let client = makeClient(t, sleeper: sleeper, retry: RetryPolicy(maximumAttempts: 5, baseDelay: 0.5))
        _ = try await client.database(.private).listZones()
        #expect(t.requests.count == 4)
        #expect(sleeper.waits == [3, 1.0, 2.0])
    }

    @Test func retriesStopAtTheLimitWithTheLastError() async throws {
        let sleeper = RecordingSleeper()
        let t = ScriptedTransport(json: Array(repeating: (503, #"{"serverErrorCode":"TRY_AGAIN_LATER","retryAfter":1}"#), count: 3))
        let client = makeClient(t, sleeper: sleeper, retry: RetryPolicy(maximumAttempts: 3))
        await #expect { try await client.database(.private).listZones() } throws: {
            ($0 as? CloudKitError)?.serverErrorCode == .tryAgainLater
        }
        #expect(t.requests.count == 3 && sleeper.waits == [1, 1])
    }

    @Test func aLongRetryAfterGoesToTheCaller() async throws {
        let sleeper = RecordingSleeper()
        let t = ScriptedTransport(json: [(429, #"{"serverErrorCode":"THROTTLED","retryAfter":600}"#)])
        let client = makeClient(t, sleeper: sleeper)
        await #expect { try await client.database(.private).listZones() } throws: {
            ($0 as? CloudKitError)?.retryAfter == 600 && "\($0)".contains("Retry after 600 s")
        }
        #expect(sleeper.waits.isEmpty)
    }

    @Test func modifyIsNotRetriedWhenTheAnswerDoesNotProveNothingWasApplied() async throws {
        // A dropped connection could have happened after the server applied the batch.
        let t = ScriptedTransport([{ _ in throw CloudKitError(kind: .transport, reason: "the server closed the connection") }])
        let client = makeClient(t)
        await #expect { try await client.database(.private).modifyRecords(ModifyRecordsRequest(operations: [.forceDelete(recordName: "x")])) } throws: {
            ($0 as? CloudKitError)?.kind == .transport
        }
        #expect(t.requests.count == 1)
        // A top-level THROTTLED refused the whole request, so it is retried.
        let t2 = ScriptedTransport(json: [(429, #"{"serverErrorCode":"THROTTLED","retryAfter":1}"#), (200, #"{"records":[{"recordName":"x","deleted":true}]}"#)])
        let result = try await makeClient(t2).database(.private).modifyRecords(ModifyRecordsRequest(operations: [.forceDelete(recordName: "x")]))
        #expect(t2.requests.count == 2 && result.isCompleteSuccess)
        #expect(t2.requests[0].body! == t2.requests[1].body!)
    }

    @Test func atomicFailureIsAResultNotAThrow() async throws {
        let t = ScriptedTransport(json: [(400, String(decoding: try fixture("modify-response-atomic-failure"), as: UTF8.self))])
        let ops: [RecordOperation] = [.forceDelete(recordName: "note-42"), .forceDelete(recordName: "note-7"), .forceDelete(recordName: "note-3")]
        let result = try await makeClient(t).database(.private).modifyRecords(ModifyRecordsRequest(operations: ops, atomic: true))
        #expect(result.isAtomicFailure && result.httpStatus == 400)
        #expect(result.failures[1].serverErrorCode == .conflict)
        #expect(t.requests.count == 1, "an atomic failure is never retried")
    }

    @Test("malformed and wrong-typed answers are typed errors", arguments: [
        (200, "{\"zones\": ["), (200, "{\"zones\": 5}"), (200, "[]"), (200, "\u{FF}"), (404, "could not find handler for endpoint"),
        (500, "{\"serverErrorCode\": 5}"), (405, ""),
    ])
    func malformed(status: Int, body: String) async {
        let t = ScriptedTransport(json: [(status, body)])
        await #expect { try await makeClient(t).database(.private).listZones() } throws: { error in
            guard let error = error as? CloudKitError else { return false }
            return error.operation == "zones/list" && (error.kind == .invalidResponse || error.kind == .server)
        }
    }
}

@Suite struct PagingTests {
    func page(_ names: [String], _ token: String, _ more: Bool) -> (Int, String) {
        let records = names.map { #"{"recordName":"\#($0)","recordType":"T","fields":{},"recordChangeTag":"1"}"# }.joined(separator: ",")
        return (200, #"{"records":[\#(records)],"syncToken":"\#(token)","moreComing":\#(more)}"#)
    }

    @Test func changePagesFollowTheTokenUntilMoreComingIsFalse() async throws {
        let t = ScriptedTransport(json: [page(["a", "b"], "t1", true), page(["c"], "t2", true), page([], "t3", false)])
        let db = makeClient(t).database(.private)
        var names: [String] = []
        var tokens: [String] = []
        for try await page in db.recordChangePages(zoneID: ZoneID(zoneName: "Z"), resultsLimit: 2) {
            names += page.records.compactMap(\.recordName)
            tokens.append(page.syncToken)
        }
        #expect(names == ["a", "b", "c"] && tokens == ["t1", "t2", "t3"])
        let sent = try t.requests.map { try JSON(parsing: $0.body!)["syncToken"] }
        #expect(sent == [nil, "t1", "t2"])
    }

    @Test func aTokenThatDoesNotAdvanceEndsWithAnError() async throws {
        let t = ScriptedTransport(json: [page(["a"], "t1", true), page(["a"], "t1", true), page(["a"], "t1", true)])
        let db = makeClient(t).database(.private)
        var count = 0
        await #expect {
            for try await _ in db.recordChangePages(zoneID: ZoneID(zoneName: "Z")) { count += 1 }
        } throws: { ($0 as? CloudKitError)?.kind == .stalledPaging }
        #expect(count == 1 && t.requests.count == 2)
    }

    @Test func zoneChangePagesUseChangesZone() async throws {
        let t = ScriptedTransport(json: [
            (200, #"{"zones":[{"zoneID":{"zoneName":"Z"},"records":[{"recordName":"a","deleted":true}],"syncToken":"t1","moreComing":false}]}"#)
        ])
        var pages: [RecordChangesPage] = []
        for try await page in makeClient(t).database(.private).zoneChangePages(zoneID: ZoneID(zoneName: "Z"), syncToken: "t0") {
            pages.append(page)
        }
        #expect(pages.count == 1 && pages[0].records == [.deleted(recordName: "a", zoneID: nil)])
        #expect(try JSON(parsing: t.requests[0].body!) == ["zones": [["zoneID": ["zoneName": "Z"], "syncToken": "t0"]]])
        let failing = ScriptedTransport(json: [(200, #"{"zones":[{"zoneID":{"zoneName":"Z"},"serverErrorCode":"BAD_REQUEST","reason":"Unknown sync continuation type"}]}"#)])
        await #expect {
            for try await _ in makeClient(failing).database(.private).zoneChangePages(zoneID: ZoneID(zoneName: "Z")) {}
        } throws: { ($0 as? CloudKitError)?.reason == "Unknown sync continuation type" }
    }

    @Test func queryPagesFollowTheMarkerAndResendTheQuery() async throws {
        let t = ScriptedTransport(json: [
            (200, #"{"records":[{"recordName":"a","recordType":"T","fields":{}}],"continuationMarker":"m1"}"#),
            (200, #"{"records":[{"recordName":"b","recordType":"T","fields":{}}]}"#),
        ])
        var names: [String] = []
        let query = Query(recordType: "T", filterBy: [Filter("n", .greaterThan, .int64(1))])
        for try await page in makeClient(t).database(.public).queryPages(QueryRequest(query: query, resultsLimit: 1)) {
            names += page.records.compactMap(\.recordName)
        }
        #expect(names == ["a", "b"])
        let second = try JSON(parsing: t.requests[1].body!)
        #expect(second["continuationMarker"] == "m1" && second["query"] == query.json)
    }
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: T
    init(_ value: T) { _value = value }
    var value: T { lock.withLock { _value } }
    func mutate(_ body: (inout T, T) -> Void) { lock.withLock { body(&_value, _value) } }
}
