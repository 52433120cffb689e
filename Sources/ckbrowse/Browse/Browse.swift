import ArgumentParser
import BrowserRuntime
import CLibc
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

/// `ckbrowse` (the default): the full-screen browser.
struct Browse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Browse a CloudKit container in the terminal (the default command).",
        discussion: """
            With no container, profile or server, ckbrowse opens the embedded demo container \
            (iCloud.com.example.Gallery, served in-process from $XDG_DATA_HOME/ckbrowse/demo). \
            Needs a terminal of at least 80x24 characters. Honours NO_COLOR.
            """
    )

    @OptionGroup var connection: ConnectionOptions

    /// Browse takes no arguments: a word here is a mistyped subcommand (`ckbrowse frob` reaches the
    /// default command), and is said to be one instead of "Unexpected argument" and browse's usage.
    @Argument(help: .hidden) var stray: [String] = []

    func validate() throws {
        guard let word = stray.first else { return }
        let names = CKBrowse.configuration.subcommands.map { $0._commandName }
        throw ValidationError("unknown subcommand '\(TerminalText.visible(word))' (one of \(names.joined(separator: ", ")); see ckbrowse --help)")
    }

    func run() async throws {
        try await Self.run(connection.settings)
    }

    /// The browser on the connection `options` name; `ckbrowse` with no arguments comes here straight from
    /// `CKBrowse.main`.
    static func run(_ options: ConnectionOptions.Settings) async throws {
        guard clibc_isatty(1) != 0, clibc_isatty(0) != 0 else {
            FileOutput.standardError.write("ckbrowse: standard input and output must be a terminal for the browser; use a headless command (ckbrowse --help) in scripts\n")
            throw ExitCode(1)
        }
        let reference = AppReference()
        let resolved: ConnectionOptions.Resolved
        do {
            resolved = try await options.resolve(observer: { record in
                Task { @MainActor in reference.app?.record(record) }
            }, recordsExchanges: true)
        } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        // Everything kept on disk belongs to one account: server, container, environment and who is
        // signed in. When the user cannot be identified, nothing is kept (rather than kept under the
        // wrong user): the browser works from the server only and says so.
        let (identity, identityProblem) = await resolved.identify()
        let info = resolved.info
        let account = Account(server: resolved.serverID, container: info.container, environment: info.environment, identity: identity ?? .none)
        var cache: RecordCache?
        var journal: Result<StagingJournal, any Error>
        var legacy: LegacyJournal?
        if let identityProblem {
            journal = .failure(BrowserFailure(message: identityProblem))
        } else {
            // A cache that cannot be opened is not fatal: the browser then works from the server only.
            cache = try? RecordCache(account: account)
            journal = Result { try StagingJournal(account: account) }
            legacy = StagingJournal.legacy(account: account)
            if let found = legacy, found.isEmpty {
                StagingJournal.removeLegacy(path: found.path)
                legacy = nil
            }
        }
        let connection = ConnectionInfo(account: account, database: info.database)
        let code = try await runBrowser(
            client: resolved.client, cache: cache, journal: journal, legacy: legacy, connection: connection, readOnlyReason: resolved.readOnlyReason,
            reference: reference)
        if code != 0 { throw ExitCode(code) }
    }

    @MainActor
    static func runBrowser(
        client: CloudKitClient, cache: RecordCache?, journal: Result<StagingJournal, any Error>, legacy: LegacyJournal?, connection: ConnectionInfo,
        readOnlyReason: String?, reference: AppReference
    ) async throws -> Int32 {
        let app = BrowserApp(client: client, cache: cache, journal: journal, legacy: legacy, connection: connection, readOnlyReason: readOnlyReason)
        reference.app = app
        return try await app.run()
    }
}

/// Lets the client's request observer (called on any thread) reach the app on the main actor.
@MainActor
final class AppReference: Sendable {
    weak var app: BrowserApp?
    nonisolated init() {}
}
