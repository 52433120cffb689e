import ArgumentParser
import CloudKitLocal
import CloudKitWeb
import Foundation

/// `ckbrowse serve`: the local CloudKit-compatible server.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a local CloudKit Web Services server backed by SQLite.",
        discussion: """
            Point any CloudKit Web Services client at the printed URL instead of https://api.apple-cloudkit.com.
            Paths, JSON, error codes and authentication follow the service. Binds 127.0.0.1 unless --host says
            otherwise. Stops cleanly on SIGINT/SIGTERM; every acknowledged write is on disk.
            """
    )

    @Option(help: "Directory for the SQLite database (created if missing).") var data: String
    @Option(help: "Address to bind.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free port).") var port = 0
    @Option(name: .customLong("api-token"), help: ArgumentHelp("An accepted ckAPIToken (repeatable).", valueName: "token"))
    var apiTokens: [String] = []
    @Option(name: .customLong("user"), help: ArgumentHelp("A user and the web auth token that signs them in (repeatable).", valueName: "name:web-auth-token"))
    var users: [String] = []
    @Option(name: .customLong("server-key"), help: ArgumentHelp("A server-to-server Key ID and its public key PEM file (repeatable).", valueName: "key-id:public-key.pem"))
    var serverKeys: [String] = []
    @Option(help: ArgumentHelp("Fill the database with a data set on first start (demo).", valueName: "name")) var seed: String?

    func validate() throws {
        if let seed, seed != "demo" { throw ValidationError("unknown seed '\(seed)'; the only seed is 'demo'") }
        for user in users where !user.contains(":") { throw ValidationError("--user takes NAME:WEB_AUTH_TOKEN") }
        for key in serverKeys where !key.contains(":") { throw ValidationError("--server-key takes KEY_ID:PUBLIC_KEY_PEM_FILE") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        var configuration = LocalServerConfiguration()
        configuration.apiTokens = apiTokens
        configuration.users = users.map { entry in
            let parts = entry.split(separator: ":", maxSplits: 1)
            return (name: String(parts[0]), token: String(parts[1]))
        }
        configuration.serverKeys = try serverKeys.map { entry in
            let parts = entry.split(separator: ":", maxSplits: 1)
            let source = String(parts[1])
            let pem = source.contains("-----BEGIN") ? source : try String(contentsOfFile: source, encoding: .utf8)
            guard pem.contains("BEGIN PUBLIC KEY") else {
                throw ValidationError("--server-key \(parts[0]): expected a PEM public key (openssl ec -in eckey.pem -pubout)")
            }
            return (keyID: String(parts[0]), publicKeyPEM: pem)
        }
        if seed == "demo" { DemoSeed.configure(&configuration) }
        if apiTokens.isEmpty && seed == nil {
            FileHandle.standardError.write(Data("warning: no --api-token given; only tokens stored in \(data) are accepted\n".utf8))
        }
        let displayHost = host.contains(":") ? "[\(host)]" : host
        let store = try Store(directory: data)
        // The base URL is known once the port is; redirect URLs are built from it.
        configuration.baseURL = "http://\(displayHost):\(port)"
        let boundPort = port
        let service = try LocalCloudKit(store: store, configuration: configuration)
        if seed == "demo" {
            if try await DemoSeed.seedIfNeeded(service) {
                print("seeded demo container \(DemoSeed.container)")
            }
            print("demo API token: \(DemoSeed.apiToken)")
            print("demo web auth token (user '\(DemoSeed.userName)'): \(DemoSeed.webAuthToken)")
        }
        if !["127.0.0.1", "localhost", "::1"].contains(host) {
            FileHandle.standardError.write(Data("warning: binding \(host), not loopback: other machines can reach this server\n".utf8))
        }
        let server = LocalHTTPServer(service: service, host: host, port: boundPort)
        let app = server.application { port in
            service.setBaseURL("http://\(displayHost):\(port)")
            print("ckbrowse serve: listening on http://\(displayHost):\(port)  (data: \(store.path))")
            fflush(nil)
        }
        try await app.runService()
    }
}
