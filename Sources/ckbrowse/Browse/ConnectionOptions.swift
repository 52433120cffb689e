import ArgumentParser
import BrowserRuntime
import CloudKitLocal
import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import RecordBrowser
import TerminalUI

/// How to reach a container: flags, then environment variables, then a profile. Shared by the browser
/// and the headless commands. Tokens are not echoed anywhere.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "A profile from $XDG_CONFIG_HOME/ckbrowse/config.toml (env: CKBROWSE_PROFILE).") var profile: String?
    @Option(help: "Server URL (default https://api.apple-cloudkit.com; env: CLOUDKIT_SERVER).") var server: String?
    @Option(help: "Container ID, e.g. iCloud.com.example.Notes (env: CLOUDKIT_CONTAINER).") var container: String?
    @Option(help: "development or production (env: CLOUDKIT_ENVIRONMENT).") var environment: CloudKitEnvironment?
    @Option(help: "public, private or shared (env: CLOUDKIT_DATABASE).") var database: DatabaseScope?
    @Option(name: .customLong("api-token"), help: "API token. Prefer CLOUDKIT_API_TOKEN or a profile: flags show in ps.") var apiToken: String?
    @Option(name: .customLong("web-auth-token"), help: "Web auth token. Prefer CLOUDKIT_WEB_AUTH_TOKEN or a profile.") var webAuthToken: String?
    @Option(name: .customLong("key-id"), help: "Server-to-server Key ID (env: CLOUDKIT_KEY_ID).") var keyID: String?
    @Option(name: .customLong("key-file"), help: "Server-to-server private key PEM file, mode 600 (env: CLOUDKIT_KEY_FILE).") var keyFile: String?
    @Option(name: .customLong("demo-user"), help: "The embedded demo's user: demo (default), or guest, who demo shares its Drafts zone and an exhibition with (opens the shared database).")
    var demoUser: String?
    @Flag(name: .customLong("read-only"), help: "Refuse every write (also a profile key; production profiles are read-only unless allow-writes = true).")
    var readOnly = false

    /// A resolved connection.
    struct Resolved {
        var client: CloudKitClient
        var info: (container: String, environment: CloudKitEnvironment, database: DatabaseScope, server: String)
        /// The server as an identity (normalized URL, or the embedded demo and its data directory).
        var serverID: ServerID
        var credentials: Credentials
        var isDemo: Bool
        /// Why writes are refused, or nil when they are allowed.
        var readOnlyReason: String? = nil

        /// Who the requests are made as. A web auth token rotates, so the user is identified by the
        /// record name `users/current` answers: one request at start. Returns nil (with the reason)
        /// when it cannot be found out; the caller then keeps nothing on disk.
        func identify() async -> (identity: SignedInIdentity?, problem: String?) {
            switch credentials {
            case .serverToServer(let key): return (.serverKey(keyID: key.keyID), nil)
            case .apiToken(_, let webAuthToken):
                guard webAuthToken != nil else { return (SignedInIdentity.none, nil) }
                do {
                    let user = try await client.database(.public).currentUser()
                    return (.user(recordName: user.userRecordName), nil)
                } catch let error as CloudKitError where error.serverErrorCode == .authenticationRequired || error.serverErrorCode == .authenticationFailed {
                    // The web auth token is not (or no longer) valid: requests go out as no user, so
                    // that is whose edits these are.
                    return (SignedInIdentity.none, nil)
                } catch {
                    return (nil, "the signed-in user could not be identified (\(BrowserFailure(error).message))")
                }
            }
        }
    }

    /// The options as plain values: what `resolve` reads. `ckbrowse` with no arguments makes them without
    /// ArgumentParser (`CKBrowse.main`'s fast path), so the browser's first frame does not wait for the
    /// command tree to be built.
    var settings: Settings {
        Settings(
            profile: profile, server: server, container: container, environment: environment, database: database, apiToken: apiToken,
            webAuthToken: webAuthToken, keyID: keyID, keyFile: keyFile, demoUser: demoUser, readOnly: readOnly)
    }

    /// True when nothing names another container or a server: the embedded demo is used.
    var isDemo: Bool { settings.isDemo }

    /// `recordsExchanges`: keep whole exchanges for the browser's request inspector.
    func resolve(observer: (@Sendable (RequestRecord) -> Void)? = nil, recordsExchanges: Bool = false) async throws -> Resolved {
        try await settings.resolve(observer: observer, recordsExchanges: recordsExchanges)
    }

    /// The connection options' values; all nil (and not read-only) is `ckbrowse` with no options.
    struct Settings: Sendable, Equatable {
        var profile: String?
        var server: String?
        var container: String?
        var environment: CloudKitEnvironment?
        var database: DatabaseScope?
        var apiToken: String?
        var webAuthToken: String?
        var keyID: String?
        var keyFile: String?
        var demoUser: String?
        var readOnly = false

        var environmentVariables: [String: String] { ProcessInfo.processInfo.environment }

        /// True when nothing names another container or a server: the embedded demo is used. Naming the
        /// demo's container (without a server or credentials) opens the demo too.
        var isDemo: Bool {
            let env = environmentVariables
            guard profile == nil, env["CKBROWSE_PROFILE"] == nil, server == nil, env["CLOUDKIT_SERVER"].map({ $0.isEmpty }) ?? true else { return false }
            guard let named = container ?? env["CLOUDKIT_CONTAINER"].flatMap({ $0.isEmpty ? nil : $0 }) else { return true }
            let credentials = apiToken ?? keyID ?? env["CLOUDKIT_API_TOKEN"] ?? env["CLOUDKIT_KEY_ID"]
            return named == DemoSeed.container && (credentials ?? "").isEmpty
        }

        /// `recordsExchanges`: keep whole exchanges for the browser's request inspector.
        func resolve(observer: (@Sendable (RequestRecord) -> Void)? = nil, recordsExchanges: Bool = false) async throws -> Resolved {
            if isDemo { return try await demo(observer: observer, recordsExchanges: recordsExchanges) }
            let env = environmentVariables
            var settings: [String: String] = [:]
            var profileName: String?
            if let name = profile ?? env["CKBROWSE_PROFILE"] {
                let file = try ProfileFile.load()
                guard let values = file.profiles[name] else {
                    throw ValidationError("no profile '\(name)' in \(ProfileFile.defaultPath) (profiles: \(file.profiles.keys.sorted().joined(separator: ", ")))")
                }
                settings = values
                // A variable the profile names must hold the token: unset or empty, it is said, not
                // sent as no token at all.
                for (key, token) in [("api-token-env", "api-token"), ("web-auth-token-env", "web-auth-token")] {
                    guard let variable = values[key] else { continue }
                    guard let value = env[variable], !value.isEmpty else {
                        throw MissingCredentials(description: "profile '\(name)' reads \(token) from $\(variable) (\(key)), which is \(env[variable] == nil ? "not set" : "empty")")
                    }
                    settings[token] = value
                }
                profileName = name
            }
            func pick(_ flag: String?, _ variable: String, _ key: String) -> String? {
                flag ?? env[variable].flatMap { $0.isEmpty ? nil : $0 } ?? settings[key]
            }
            guard let container = pick(container, "CLOUDKIT_CONTAINER", "container") else {
                throw ValidationError(profileName.map { "no container: profile '\($0)' names none (container = \"iCloud.…\"), and neither --container nor CLOUDKIT_CONTAINER gives one" }
                    ?? "no container: pass --container, set CLOUDKIT_CONTAINER, or use a profile")
            }
            let serverURL = pick(server, "CLOUDKIT_SERVER", "server") ?? CloudKitConfiguration.appleServerURL
            // Said here, not by the HTTP client at the first request ("HTTPClientError.emptyScheme").
            guard let url = URL(string: serverURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), !(url.host ?? "").isEmpty else {
                throw ValidationError("the server '\(TerminalText.visible(serverURL))' is not a URL: give http://HOST[:PORT] or https://HOST")
            }
            // Where a value came from, for its refusal: a flag, a variable, or the profile.
            func source(_ flag: String?, _ variable: String, _ key: String) -> String {
                if flag != nil { return "" }
                if !(env[variable] ?? "").isEmpty { return " (from \(variable))" }
                return profileName.map { " (profile '\($0)', \(key) in \(ProfileFile.defaultPath))" } ?? ""
            }
            let environmentName = pick(environment?.rawValue, "CLOUDKIT_ENVIRONMENT", "environment") ?? "development"
            guard let environment = CloudKitEnvironment(rawValue: environmentName) else {
                throw ValidationError("environment must be development or production, not '\(environmentName)'" + source(self.environment?.rawValue, "CLOUDKIT_ENVIRONMENT", "environment"))
            }
            let databaseName = pick(database?.rawValue, "CLOUDKIT_DATABASE", "database") ?? "public"
            guard let database = DatabaseScope(rawValue: databaseName) else {
                throw ValidationError("database must be public, private or shared, not '\(databaseName)'" + source(self.database?.rawValue, "CLOUDKIT_DATABASE", "database"))
            }
            let credentials: Credentials
            if let keyID = pick(keyID, "CLOUDKIT_KEY_ID", "key-id") {
                guard let keyFile = pick(keyFile, "CLOUDKIT_KEY_FILE", "key-file") else {
                    throw MissingCredentials(description: "the server-to-server key \(keyID) needs its private key file: --key-file (or CLOUDKIT_KEY_FILE, or key-file in the profile)")
                }
                credentials = .serverToServer(try ServerToServerKey.load(keyID: keyID, file: Paths.expandingTilde(keyFile)))
            } else if let token = pick(apiToken, "CLOUDKIT_API_TOKEN", "api-token") {
                credentials = .apiToken(token, webAuthToken: pick(webAuthToken, "CLOUDKIT_WEB_AUTH_TOKEN", "web-auth-token"))
            } else {
                throw MissingCredentials(description: "no credentials for \(container): set CLOUDKIT_API_TOKEN (and CLOUDKIT_WEB_AUTH_TOKEN for a user), use a profile with api-token-env, or a server-to-server key (--key-id and --key-file)")
            }
            var configuration = CloudKitConfiguration(serverURL: serverURL, container: container, environment: environment)
            configuration.recordsExchanges = recordsExchanges
            let client = CloudKitClient(configuration: configuration, credentials: credentials, transport: AsyncHTTPTransport(), observer: observer)
            let host = URLHost.of(serverURL)
            var readOnlyReason: String?
            if readOnly {
                readOnlyReason = "--read-only was given"
            } else if settings["read-only"] == "true" {
                readOnlyReason = "the profile says read-only = true"
            } else if !settings.isEmpty && environment == .production && settings["allow-writes"] != "true" {
                readOnlyReason = "production profiles are read-only unless they say allow-writes = true"
            }
            return Resolved(
                client: client, info: (container, environment, database, host), serverID: .url(normalizing: serverURL), credentials: credentials, isDemo: false,
                readOnlyReason: readOnlyReason)
        }

        /// The embedded demo container, in-process, with its data in the user's data directory.
        func demo(observer: (@Sendable (RequestRecord) -> Void)?, recordsExchanges: Bool = false) async throws -> Resolved {
            let directory = Paths.join(XDG.dataHome(), "ckbrowse/demo")
            var configuration = LocalServerConfiguration()
            DemoSeed.configure(&configuration)
            configuration.baseURL = "http://in-process"
            configuration.answerCacheBytes = LocalServerConfiguration.embeddedAnswerCacheBytes
            let service = try LocalCloudKit(store: try Store(directory: directory), configuration: configuration)
            // The demo has both environments: production is seeded too, the first time it is opened.
            let environmentName = environment?.rawValue ?? environmentVariables["CLOUDKIT_ENVIRONMENT"].flatMap { $0.isEmpty ? nil : $0 } ?? "development"
            guard let chosen = CloudKitEnvironment(rawValue: environmentName) else {
                throw ValidationError("environment must be development or production, not '\(environmentName)'")
            }
            // Before the terminal is taken over: a first start writes the demo for seconds, said on stderr.
            try await DemoSeed.seedIfNeeded(service, environment: chosen) {
                FileOutput.standardError.write("ckbrowse: first start: writing the local demo (\(chosen.rawValue)), a few seconds…\n")
            }
            let guest = demoUser == DemoSeed.guestName
            guard demoUser == nil || guest || demoUser == DemoSeed.userName else {
                throw ValidationError("--demo-user is \(DemoSeed.userName) or \(DemoSeed.guestName), not '\(demoUser ?? "")'")
            }
            let credentials = Credentials.apiToken(DemoSeed.apiToken, webAuthToken: guest ? DemoSeed.guestWebAuthToken : DemoSeed.webAuthToken)
            var clientConfiguration = CloudKitConfiguration(serverURL: "http://in-process", container: DemoSeed.container, environment: chosen)
            clientConfiguration.recordsExchanges = recordsExchanges
            let client = CloudKitClient(
                configuration: clientConfiguration, credentials: credentials, transport: InProcessTransport(service: service), observer: observer)
            return Resolved(
                client: client, info: (DemoSeed.container, chosen, database ?? (guest ? .shared : .private), "local demo (in-process)"),
                serverID: .embeddedDemo(dataDirectory: directory), credentials: credentials, isDemo: true,
                readOnlyReason: readOnly ? "--read-only was given" : nil)
        }
    }
}

extension CloudKitEnvironment: ExpressibleByArgument {}
extension DatabaseScope: ExpressibleByArgument {}

enum URLHost {
    static func of(_ url: String) -> String {
        var rest = Substring(url)
        if let r = rest.firstRange(of: "://") { rest = rest[r.upperBound...] }
        return String(rest.prefix { $0 != "/" && $0 != "?" })
    }
}

/// A connection names no way to authenticate: `ckbrowse` exits with the authentication status (4).
struct MissingCredentials: Error, CustomStringConvertible {
    var description: String
}
