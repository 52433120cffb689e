import ArgumentParser
import CLibc
import CloudKitLocal
import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Hummingbird
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `ckbrowse serve`: the local CloudKit-compatible server.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a local CloudKit Web Services server backed by SQLite.",
        discussion: """
            Point any CloudKit Web Services client at the printed URL instead of https://api.apple-cloudkit.com. \
            Paths, JSON, error codes and authentication follow the service. Binds 127.0.0.1 unless --host says \
            otherwise. Stops cleanly on SIGINT/SIGTERM; every acknowledged write is on disk.
            """
    )

    @Option(help: "Directory for the SQLite database (created if missing).") var data: String?
    @Flag(name: .customLong("in-memory"), help: "Keep the data in memory only (a RAM-backed temporary directory, removed on exit): for test runs. Writes are then answered on the event loop, without thread hops.")
    var inMemory = false
    @Option(help: ArgumentHelp("Users, tokens, keys, the containers each may use, and allowed origins, from a TOML file (flags add to it).", valueName: "file.toml"))
    var config: String?
    @Option(name: .customLong("import"), help: ArgumentHelp("Start from a snapshot (a directory --export-on-exit wrote) into an empty --data or --in-memory.", valueName: "dir"))
    var importSnapshot: String?
    @Option(name: .customLong("export-on-exit"), help: ArgumentHelp("On SIGINT/SIGTERM, write a snapshot of all data to this directory.", valueName: "dir"))
    var exportOnExit: String?
    @Option(help: "Address to bind.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free port).") var port = 0
    @Option(name: .customLong("api-token"), help: ArgumentHelp("An accepted ckAPIToken, for CONTAINER only when given (else --container's, else any) (repeatable). env:VAR or file:PATH reads it from there, out of sight of ps.", valueName: "token[@container]"))
    var apiTokens: [String] = []
    @Option(name: .customLong("user"), help: ArgumentHelp("A user, the web auth token that signs them in (env:VAR or file:PATH reads it from there), and optionally the email others find them by (repeatable).", valueName: "name:web-auth-token[:email]"))
    var users: [String] = []
    @Option(name: .customLong("server-key"), help: ArgumentHelp("A server-to-server Key ID and its public key PEM file (repeatable).", valueName: "key-id:public-key.pem"))
    var serverKeys: [String] = []
    @Option(help: ArgumentHelp("Fill the database with a data set on first start (demo).", valueName: "name")) var seed: String?
    @Option(name: .customLong("origin-exclusion"), help: "Whether the writer's own push tokens are notified: none (default), session, or header (X-CK-Device-Token).")
    var originExclusion: String = "none"
    @Option(name: .customLong("update-match"), help: "Which version of an updated record a query subscription matches: after (default) or before_or_after.")
    var updateMatch: String = "after"
    @Option(name: .customLong("hold-seconds"), help: "How long a webcourier long-poll waits before an empty keep-alive answer.")
    var holdSeconds: Double = 60
    @Option(name: .customLong("max-queued"), help: "Notifications kept per push token while nobody polls (oldest dropped first).")
    var maxQueued: Int = 100
    @Option(name: .customLong("payload-limit"), help: "Push payloads above this many bytes are pruned and marked.")
    var payloadLimit: Int = 4096
    @Option(name: .customLong("answer-cache-mb"), help: "Megabytes of read answers kept for repeated requests until the next commit (0 turns the cache off).")
    var answerCacheMB: Int = 64
    @Option(name: .customLong("max-asset-mb"), help: "The largest asset file an upload URL takes, in MB: 15 as the assets/upload page says, up to 50 as the Data Size Limits page says.")
    var maxAssetMB: Int = 15
    @Option(help: ArgumentHelp("Import this schema into development at start (as cktool import-schema).", valueName: "file.ckdb"))
    var schema: String?
    @Option(help: "The container --schema and --role apply to (default: the demo's with --seed demo), and the one --api-token and --server-key are bound to.")
    var container: String?
    @Option(name: .customLong("role"), help: ArgumentHelp("Give a user a custom role of the schema, in both environments (repeatable).", valueName: "user:role"))
    var roles: [String] = []
    @Option(name: .customLong("allow-origin"), help: ArgumentHelp("A web origin whose pages may call the server (CORS; repeatable; '*' for any; default: pages served from this machine).", valueName: "origin"))
    var allowedOrigins: [String] = []
    @Option(name: .customLong("allow-host"), help: ArgumentHelp("A host name requests may be addressed to, besides IP addresses and localhost (repeatable; DNS rebinding is refused).", valueName: "name"))
    var allowedHosts: [String] = []
    @Option(name: .customLong("web-token-lifetime"), help: "Seconds a web auth token the server mints (sign-in, and the one each answer carries) stays valid.")
    var webTokenLifetime: Double = 86_400
    @Flag(name: .customLong("import-credentials"), help: "With --import: also accept the API tokens, users and keys the snapshot carries, and keep its token secret.")
    var importCredentials = false
    @Option(name: .customLong("endpoints"), help: ArgumentHelp("Print every endpoint, who may call it and from where (as SERVER.md's table), and exit.", valueName: "markdown|json"))
    var printEndpoints: String?
    @Flag(name: .customLong("export-credentials"), help: "With --export-on-exit: also write this run's API tokens, users and keys, and the token secret, into the snapshot.")
    var exportCredentials = false
    @Flag(name: .customLong("single-use-tokens"), help: "Accept each web auth token once, as Apple documents (the live service was seen accepting old ones).")
    var singleUseTokens = false
    @Flag(name: .customLong("no-index-rules"), help: "Answer queries the schema's indexes do not allow (CloudKit refuses them).")
    var noIndexRules = false
    @Option(name: .customLong("header-timeout"), help: "Seconds a client has to send a request's head (and the longest pause inside a body); a slower one is disconnected.")
    var headerTimeout: Double = ConnectionLimits().headerTimeout
    @Option(name: .customLong("idle-timeout"), help: "Seconds a keep-alive connection may stay open with no request.")
    var idleTimeout: Double = ConnectionLimits().idleTimeout
    @Option(name: .customLong("write-timeout"), help: "Seconds an answer may wait for its client to read any of it; then the connection is closed and the answer freed.")
    var writeTimeout: Double = ConnectionLimits().writeTimeout
    @Option(name: .customLong("max-connections"), help: "Connections served at once; more get 503 TRY_AGAIN_LATER (default 1024, less when the open-files limit is low).")
    var maxConnections: Int?

    func validate() throws {
        if let printEndpoints {
            guard ["markdown", "json"].contains(printEndpoints) else { throw ValidationError("--endpoints takes markdown or json") }
            return
        }
        guard (data != nil) != inMemory else { throw ValidationError("give --data DIR or --in-memory (one of them)") }
        if let seed, seed != "demo" { throw ValidationError("unknown seed '\(seed)'; the only seed is 'demo'") }
        for user in users where !user.contains(":") { throw ValidationError("--user takes NAME:WEB_AUTH_TOKEN") }
        for key in serverKeys where !key.contains(":") { throw ValidationError("--server-key takes KEY_ID:PUBLIC_KEY_PEM_FILE") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard NotificationSettings.OriginExclusion(rawValue: originExclusion) != nil else { throw ValidationError("--origin-exclusion is none, session or header") }
        guard NotificationSettings.UpdateMatch(rawValue: updateMatch) != nil else { throw ValidationError("--update-match is after or before_or_after") }
        guard holdSeconds > 0, holdSeconds <= 3600 else { throw ValidationError("--hold-seconds must be between 0 and 3600") }
        guard (0...65536).contains(answerCacheMB) else { throw ValidationError("--answer-cache-mb must be between 0 and 65536") }
        guard (1...50).contains(maxAssetMB) else { throw ValidationError("--max-asset-mb must be between 1 and 50 (CloudKit's largest asset)") }
        for role in roles where !role.contains(":") { throw ValidationError("--role takes USER:ROLE") }
        if (schema != nil || !roles.isEmpty) && container == nil && seed != "demo" {
            throw ValidationError("--schema and --role need --container (or --seed demo)")
        }
        guard maxQueued >= 1, payloadLimit >= 256 else { throw ValidationError("--max-queued must be at least 1 and --payload-limit at least 256") }
        guard webTokenLifetime >= 1, webTokenLifetime <= 365 * 86_400 else { throw ValidationError("--web-token-lifetime must be between 1 second and a year") }
        if importCredentials && importSnapshot == nil { throw ValidationError("--import-credentials goes with --import DIR") }
        if exportCredentials && exportOnExit == nil { throw ValidationError("--export-credentials goes with --export-on-exit DIR") }
        for (flag, seconds) in [("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout), ("--write-timeout", writeTimeout)] {
            guard seconds > 0, seconds <= 86_400 else { throw ValidationError("\(flag) must be between 0 and 86400 seconds") }
        }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
    }

    /// A credential as given: itself, or `env:VAR` / `file:PATH` naming where it is (so it stays out
    /// of `ps`).
    static func secret(_ text: String, flag: String) throws -> String {
        if text.hasPrefix("env:") {
            let name = String(text.dropFirst(4))
            guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
                throw ValidationError("\(flag): the environment variable \(name) is not set")
            }
            return value
        }
        if text.hasPrefix("file:") {
            let path = String(text.dropFirst(5))
            guard let value = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("\(flag): " + SystemErrorWords.cannotRead(path)) }
            let trimmed = value.trimmingWhitespace()
            guard !trimmed.isEmpty else { throw ValidationError("\(flag): \(path) is empty") }
            return trimmed
        }
        return text
    }

    /// glibc's malloc, tuned for answers of hundreds of kilobytes: allocations up to 16 MiB come from
    /// the heap and up to 64 MiB of freed heap is kept for the next request, per malloc arena (4 MiB
    /// more taken each time it grows). With the defaults, every computed 200-record page (218 KB,
    /// copied once into the socket's buffer) was mmapped, faulted in page by page and unmapped again:
    /// 75 page faults a page, more CPU than reading and writing it (PERFORMANCE.md). Request bodies and
    /// uploads up to 16 MiB come from the heap too. Answers whether the settings were taken (false off
    /// glibc, where nothing changes).
    @discardableResult
    static func keepFreedMemory() -> Bool {
        clibc_keep_freed_memory(16 << 20, 64 << 20, 4 << 20) == 1
    }

    func run() async throws {
        if let printEndpoints {
            print(printEndpoints == "json" ? EndpointRule.json.prettyPrinted() : EndpointRule.markdown)
            return
        }
        Self.keepFreedMemory()
        var configuration = LocalServerConfiguration()
        // In RAM a commit waits for no disk: writes are answered on the event loop, as reads are.
        configuration.answersWritesOnEventLoop = inMemory
        let file = try config.map(ServeConfig.load)
        file?.apply(to: &configuration)
        let container = self.container ?? file?.container
        // TOKEN@CONTAINER binds a token to its container (§2.1); a token or key given without one is
        // bound to --container when given, else works for any container (a local convenience).
        for entry in apiTokens {
            if let at = entry.lastIndex(of: "@"), entry[entry.index(after: at)...].hasPrefix("iCloud.") {
                let token = try Self.secret(String(entry[..<at]), flag: "--api-token")
                configuration.apiTokens.append(token)
                configuration.credentialContainers[token] = String(entry[entry.index(after: at)...])
            } else {
                let token = try Self.secret(entry, flag: "--api-token")
                configuration.apiTokens.append(token)
                if let container { configuration.credentialContainers[token] = container }
            }
        }
        for entry in users {
            // NAME:TOKEN, or NAME:TOKEN:EMAIL when the last part is an email address (a token may
            // itself contain colons).
            var parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            if let mark = parts[1].lastIndex(of: ":"), parts[1][parts[1].index(after: mark)...].contains("@") {
                let email = String(parts[1][parts[1].index(after: mark)...])
                parts[1] = String(parts[1][..<mark])
                configuration.userContacts[parts[0]] = UserContact(email: email)
            }
            configuration.users.append((name: parts[0], token: try Self.secret(parts[1], flag: "--user \(parts[0])")))
        }
        if let container {
            for key in serverKeys { configuration.credentialContainers[String(key.prefix { $0 != ":" })] = container }
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
        configuration.notifications.originExclusion = NotificationSettings.OriginExclusion(rawValue: originExclusion)!
        configuration.notifications.updateMatch = NotificationSettings.UpdateMatch(rawValue: updateMatch)!
        configuration.notifications.holdSeconds = holdSeconds
        configuration.notifications.maxQueued = maxQueued
        configuration.notifications.payloadLimit = payloadLimit
        configuration.answerCacheBytes = answerCacheMB << 20
        configuration.maximumAssetBytes = maxAssetMB << 20
        configuration.enforcesIndexes = !noIndexRules
        configuration.singleUseWebAuthTokens = singleUseTokens
        if !allowedOrigins.isEmpty { configuration.allowedOrigins = (configuration.allowedOrigins ?? []).union(allowedOrigins) }
        configuration.allowedHosts.formUnion(allowedHosts.map { $0.lowercased() })
        configuration.webAuthTokenLifetime = webTokenLifetime
        if seed == "demo" { DemoSeed.configure(&configuration) }
        // A schema file is read before anything starts, so a mistake in it stops here.
        let schemaFile = try schema.map { path -> (String, CloudKitSchema) in
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { throw ValidationError(SystemErrorWords.cannotRead(path)) }
            do { return (path, try SchemaLanguage.parse(text)) } catch let error as SchemaLanguage.ParseError {
                throw ValidationError("\(path):\(error.line):\(error.column): \(error.message)")
            }
        }
        let displayHost = host.contains(":") ? "[\(host)]" : host
        // --in-memory: a temporary directory in RAM (/dev/shm) where there is one, removed on exit.
        let directory: String
        if let data {
            directory = data
        } else {
            let shm = "/dev/shm"
            let base = FileManager.default.isWritableFile(atPath: shm) ? shm : FileManager.default.temporaryDirectory.path
            directory = Paths.join(base, "ckbrowse-serve-\(UUID().uuidString)")
        }
        defer { if inMemory { try? FileManager.default.removeItem(atPath: directory) } }
        if let importSnapshot {
            do {
                let carried = try Store.importSnapshot(from: importSnapshot, into: directory, credentials: importCredentials)
                carried?.apply(to: &configuration)
            } catch let error as SnapshotError { throw ValidationError(error.message) }
            print("imported the snapshot \(importSnapshot)" + (importCredentials ? " with its credentials" : ""))
        }
        if configuration.apiTokens.isEmpty {
            FileOutput.standardError.write("warning: no API token given (--api-token, --config or --seed demo): every request will be refused\n")
        }
        let store: Store
        do {
            store = try Store(directory: directory, inMemory: inMemory)
        } catch {
            throw CommandFailure("cannot use \(inMemory ? "the in-memory directory " : "")\(directory) for the data: \(SystemErrorWords.words(error))")
        }
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
            print("demo web auth token (user '\(DemoSeed.guestName)', who '\(DemoSeed.userName)' shares with): \(DemoSeed.guestWebAuthToken)")
        }
        let schemaContainer = container ?? DemoSeed.container
        if let (path, schema) = schemaFile {
            do {
                let report = try await service.importSchema(schema, container: schemaContainer)
                print("imported \(path) into \(schemaContainer) (development)")
                for line in report.lines { print("  \(line)") }
            } catch let error as ServiceError {
                throw ValidationError("\(path): \(error.reason)")
            }
        }
        for (user, role) in file?.roles ?? [] {
            for environment in [CloudKitEnvironment.development, .production] {
                try await service.assignRole(role, to: user, container: schemaContainer, environment: environment)
            }
        }
        for entry in roles {
            let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            for environment in [CloudKitEnvironment.development, .production] {
                try await service.assignRole(parts[1], to: parts[0], container: schemaContainer, environment: environment)
            }
        }
        // What a fixture reset (POST /admin/1/…/reset) returns a container to: this start's schema.
        try service.markStartingState()
        if !["127.0.0.1", "localhost", "::1"].contains(host) {
            FileOutput.standardError.write("warning: binding \(host), not loopback: other machines can reach this server\n")
        }
        // On SIGINT/SIGTERM the HTTP server drains its requests; long-polls would hold it for up to
        // --hold-seconds, so they are ended first (libdispatch lets several sources share a signal).
        let stopSources = [SIGINT, SIGTERM].map { signalNumber -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { service.closeLongPolls() }
            source.resume()
            return source
        }
        defer { stopSources.forEach { $0.cancel() } }
        // Connections are descriptors: they stay below the open-files limit (raised to its hard
        // limit first), so a flood of connections cannot leave none for the store or /ready.
        let fileLimit = Self.raiseFileLimit()
        // An answer of megabytes (a page of large records) is allocated per request. After the first
        // such allocation is freed, glibc raises its mmap threshold and serves the next ones from the
        // heap, which it rarely gives back: 20 clients that never read a 16 MB page left 420 MB
        // behind once cut off. A fixed threshold keeps them mmapped, and freeing one returns its
        // memory (tests/reliability/greedy.py).
        Self.fixMmapThreshold(256 * 1024)
        var limits = ConnectionLimits.forFileLimit(fileLimit, wanted: maxConnections ?? ConnectionLimits().maximumConnections)
        if let maxConnections, maxConnections > limits.maximumConnections {
            FileOutput.standardError.write("warning: --max-connections \(maxConnections) lowered to \(limits.maximumConnections): the open-files limit is \(fileLimit)\n")
        }
        limits.headerTimeout = headerTimeout
        limits.idleTimeout = idleTimeout
        limits.writeTimeout = writeTimeout
        let server = LocalHTTPServer(service: service, host: host, port: boundPort, limits: limits)
        let app = server.application { port in
            service.setBaseURL("http://\(displayHost):\(port)")
            print("ckbrowse serve: listening on http://\(displayHost):\(port)  (data: \(inMemory ? "in memory" : store.path))")
            if seed == "demo", let shares = try? service.shares(container: DemoSeed.container, environment: .development) {
                for share in shares {
                    print("demo share of \(share.root.map { "'\($0)' in \(share.zone)" } ?? "zone \(share.zone)"): \(share.url)")
                }
            }
            fflush(nil)
        }
        do {
            try await app.runService()
        } catch {
            guard let words = LocalHTTPServer.listenFailure(error, host: host, port: boundPort) else { throw error }
            throw CommandFailure(words)
        }
        if let exportOnExit {
            try store.exportSnapshot(to: exportOnExit, credentials: exportCredentials ? service.snapshotCredentials() : nil)
            print("exported a snapshot to \(exportOnExit)")
        }
    }

    /// Raises the soft limit on open files to the hard limit, and answers the limit now in force.
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, 1 << 20)
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// glibc's `mallopt(M_MMAP_THRESHOLD, bytes)`, which also stops the threshold's adjustment.
    /// `malloc.h` is not in Swift's Glibc module, so the function is looked up (M_MMAP_THRESHOLD is
    /// -3 in glibc's ABI); elsewhere (another libc, macOS) nothing happens.
    static func fixMmapThreshold(_ bytes: Int32) {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        _ = unsafeBitCast(symbol, to: Mallopt.self)(-3, bytes)
    }
}
