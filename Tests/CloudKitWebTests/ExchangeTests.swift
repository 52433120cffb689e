import CloudKitWeb
import Foundation
import Testing

/// Collects what the client's observer sees.
final class RecordBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [RequestRecord] = []
    var records: [RequestRecord] { lock.withLock { stored } }
    func add(_ record: RequestRecord) { lock.withLock { stored.append(record) } }
}

@Suite struct ExchangeTests {
    /// With `recordsExchanges`, the observer gets the whole exchange, and no token survives in it: not
    /// in the URL, not in the rotated token header, not echoed back in a body.
    @Test func exchangesAreKeptWithEverySecretRedacted() async throws {
        let api = "SECRET-API-TOKEN-1234", web = "SECRET-WEB-TOKEN-5678", rotated = "SECRET-ROTATED-9999"
        let transport = ScriptedTransport([{ _ in
            HTTPResponse(status: 200, headers: [("X-Apple-CloudKit-Web-Auth-Token", rotated), ("Content-Type", "application/json")],
                         body: Array(#"{"zones":[{"zoneID":{"zoneName":"echo-\#(web)"}}]}"#.utf8))
        }])
        let box = RecordBox()
        var configuration = CloudKitConfiguration(serverURL: "https://example.test", container: "iCloud.t")
        configuration.recordsExchanges = true
        let client = CloudKitClient(configuration: configuration, credentials: .apiToken(api, webAuthToken: web), transport: transport,
                                    observer: { box.add($0) })
        _ = try await client.database(.private).listZones()
        let exchange = try #require(box.records.first?.exchange)
        let everything = [exchange.url, exchange.requestBody ?? "", exchange.responseBody ?? ""]
            + (exchange.requestHeaders + exchange.responseHeaders).map { "\($0.name): \($0.value)" }
        for secret in [api, web, rotated] { #expect(!everything.joined(separator: "\n").contains(secret), "\(secret.prefix(10))…") }
        #expect(exchange.url.contains("ckAPIToken=<redacted>") && exchange.url.contains("ckWebAuthToken=<redacted>"))
        #expect(exchange.responseHeaders.contains { $0.name == "X-Apple-CloudKit-Web-Auth-Token" && $0.value == "<redacted>" })
        #expect(exchange.responseBody?.contains("echo-<redacted>") == true)
        // Off by default: nothing is copied.
        let quiet = RecordBox()
        let plain = CloudKitClient(configuration: CloudKitConfiguration(serverURL: "https://example.test", container: "iCloud.t"),
                                   credentials: .apiToken(api), transport: ScriptedTransport(json: [(200, #"{"zones":[]}"#)]), observer: { quiet.add($0) })
        _ = try await plain.database(.public).listZones()
        #expect(quiet.records.first != nil && quiet.records.first?.exchange == nil)
    }

    /// A webcourier long-poll is kept too (the inspector shows its time and the push it brought), with
    /// its URL's token redacted wherever it appears: the path's last segment, the query's values.
    @Test func webcourierPollsAreKeptWithTheirTokenRedacted() async throws {
        let token = "SECRET-COURIER-TOKEN-4242", other = "SECRET-QUERY-TOKEN-77"
        let transport = ScriptedTransport([{ _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/json")],
                         body: Array(#"{"ck":{"ce":2,"cid":"iCloud.t","nid":"n-1","met":{"sid":"s","zid":"Z","zoid":"_defaultOwner","rid":"r","dbs":1,"fo":1}},"echo":"\#(token)"}"#.utf8))
        }, { _ in HTTPResponse(status: 200, headers: [], body: []) }])
        let box = RecordBox()
        var configuration = CloudKitConfiguration(serverURL: "https://example.test", container: "iCloud.t")
        configuration.recordsExchanges = true
        let client = CloudKitClient(configuration: configuration, credentials: .apiToken("api-token-1234"), transport: transport, observer: { box.add($0) })
        _ = try await client.pollWebcourier("http://127.0.0.1:8080/webcourier/1/\(token)")
        _ = try await client.pollWebcourier("https://push.example/aps?tok=\(other)&ttl=60")
        let first = try #require(box.records.first?.exchange), second = try #require(box.records.last?.exchange)
        #expect(first.url == "http://127.0.0.1:8080/<redacted>" && second.url == "https://push.example/<redacted>")
        #expect(first.responseBody?.contains(#""echo":"<redacted>""#) == true && first.responseBody?.contains("n-1") == true)
        #expect(first.at > 0 && box.records.allSatisfy { $0.operation == "webcourier" })
        let everything = [first.url, second.url, first.responseBody ?? ""].joined(separator: "\n")
        #expect(!everything.contains(token) && !everything.contains(other))
        // Wherever the token sits in the URL, and however it is spelled there, none of it is shown.
        for url in ["http://h/webcourier/1/\(token)/", "http://h/p?\(token)", "http://h/\(token)/poll", "http://h/w/a%2Bb%2Fcdef%3D"] {
            let (shown, secrets) = CloudKitClient.redactedWebcourierURL(url)
            #expect(shown == "http://h/<redacted>" && !secrets.isEmpty, "\(url)")
        }
        #expect(CloudKitClient.redactedWebcourierURL("http://h/w/a%2Bb%2Fcdef%3D").secrets.contains("a+b/cdef="), "the decoded form too")
    }

    /// tokens/create answers the long-poll's credential (the push token, the webcourier URL); its
    /// exchange keeps neither, nor does tokens/register's request.
    @Test func pushTokensAreRedactedInTheirExchanges() async throws {
        let apns = "APNS-SECRET-TOKEN-31337", url = "http://127.0.0.1:8080/webcourier/1/COURIER-SECRET-4242"
        let transport = ScriptedTransport([{ _ in
            HTTPResponse(status: 200, headers: [], body: Array(#"{"apnsEnvironment":"development","apnsToken":"\#(apns)","webcourierURL":"\#(url)"}"#.utf8))
        }, { _ in HTTPResponse(status: 200, headers: [], body: Array("{}".utf8)) }])
        let box = RecordBox()
        var configuration = CloudKitConfiguration(serverURL: "https://example.test", container: "iCloud.t")
        configuration.recordsExchanges = true
        let client = CloudKitClient(configuration: configuration, credentials: .apiToken("api-token-1234", webAuthToken: "web-token-5678"),
                                    transport: transport, observer: { box.add($0) })
        let created = try await client.createToken(apnsEnvironment: .development)
        try await client.registerToken(created)
        #expect(box.records.count == 2)
        for record in box.records {
            let x = try #require(record.exchange)
            let everything = [x.url, x.requestBody ?? "", x.responseBody ?? ""].joined(separator: "\n")
            #expect(!everything.contains(apns) && !everything.contains("COURIER-SECRET-4242"), "\(record.operation): \(everything)")
        }
        #expect(box.records[0].exchange?.responseBody?.contains(#""apnsToken":"<redacted>""#) == true)
    }
}
