import ArgumentParser
import BrowserRuntime
import CLibc
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
import TerminalUI

/// `ckbrowse schema export | import | validate | deploy | reset`: schemas in the CloudKit Schema
/// Language (`.ckdb`, as cktool reads and writes them), through `ckbrowse serve`'s schema endpoint,
/// the embedded demo (the default) or a serve data directory opened directly (`--data`).
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Export, import, validate, deploy or reset a schema in the CloudKit Schema Language (.ckdb, as cktool uses).",
        discussion: """
            The target is the embedded demo unless the connection options name a `ckbrowse serve` server (its \
            schema endpoint; Apple's service has none: use cktool there) or --data names a serve data directory \
            (opened directly: do not use it while a server runs on it).
            """,
        subcommands: [Export.self, Import.self, Validate.self, Deploy.self, Reset.self])

    /// Where the schema lives.
    struct Target: ParsableArguments {
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "A data directory of `ckbrowse serve`, opened directly instead of through a server.") var data: String?

        func client() async throws -> CloudKitClient {
            guard let data else { return try await connection.resolve().client }
            guard FileManager.default.fileExists(atPath: Paths.join(data, "cloudkit.sqlite")) else {
                throw ValidationError("no ckbrowse data in \(data)")
            }
            // An in-process server on the directory, with a token of its own for this run.
            let token = "schema-" + UUID().uuidString
            var configuration = LocalServerConfiguration()
            configuration.apiTokens = [token]
            configuration.baseURL = "http://in-process"
            let service = try LocalCloudKit(store: try Store(directory: data), configuration: configuration)
            let env = connection.environment ?? ProcessInfo.processInfo.environment["CLOUDKIT_ENVIRONMENT"].flatMap(CloudKitEnvironment.init(rawValue:)) ?? .development
            let container = connection.container ?? ProcessInfo.processInfo.environment["CLOUDKIT_CONTAINER"] ?? DemoSeed.container
            return CloudKitClient(
                configuration: CloudKitConfiguration(serverURL: "http://in-process", container: container, environment: env),
                credentials: .apiToken(token, webAuthToken: nil), transport: InProcessTransport(service: service))
        }
    }

    static func readFile(_ path: String) throws -> String {
        do { return try String(contentsOfFile: path, encoding: .utf8) } catch { throw ValidationError(SystemErrorWords.cannotRead(path)) }
    }

    /// Checks a file's syntax here, printing the problem as FILE:LINE:COL: message (exit 1).
    static func parse(_ path: String) throws -> (text: String, schema: CloudKitSchema) {
        let text = try readFile(path)
        do {
            return (text, try SchemaLanguage.parse(text))
        } catch {
            Out.error("\(path):\(error.line):\(error.column): \(error.message)")
            throw ExitCode(1)
        }
    }

    static func printChanges(_ lines: [String], none: String) {
        if lines.isEmpty { Out.line(none) }
        for line in lines { Out.line(line) }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a container's schema (development by default) as a .ckdb file.",
            discussion: """
                The schema is what the server holds: what was imported or deployed, plus the record types and fields \
                development created just in time (each field with the indexes that gives it, each type with the \
                default grants), and Users. A schema inferred from data an earlier version wrote says so in a comment.
                """)

        @OptionGroup var target: Target

        func run() async throws {
            do {
                // Escaped on a terminal; exact in a pipe, where it is a file to import again (the
                // escapes are for reading and do not read back).
                let text = try await target.client().schemaText()
                if clibc_isatty(1) != 0 { Out.line(text, allowing: .lines, terminator: "") } else { print(text, terminator: "") }
            } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Replace development's schema with a .ckdb file (as cktool import-schema).",
            discussion: """
                The file is the whole schema, not a change. Refused, changing nothing, if it would remove or retype \
                a record type or field production has. Development types and fields the file leaves out are removed \
                with their data (printed). Exit status: 0 imported, 1 refused or invalid, 64 bad usage.
                """)

        @Argument(help: "The .ckdb file.") var file: String
        @OptionGroup var target: Target

        func run() async throws {
            let (text, _) = try SchemaCommand.parse(file)
            do {
                SchemaCommand.printChanges(try await target.client().schema(.import, text: text), none: "imported \(file)")
            } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a .ckdb file: its syntax and rules, and (with --server or --data) what production would refuse.",
            discussion: "Exit status: 0 valid, 1 invalid (the first problem is printed with its line and column), 64 bad usage.")

        @Argument(help: "The .ckdb file.") var file: String
        @OptionGroup var target: Target

        func run() async throws {
            let (text, schema) = try SchemaCommand.parse(file)
            // A file on its own is checked here; against a server only when one is named.
            if target.data != nil || !target.connection.isDemo {
                do { _ = try await target.client().schema(.validate, text: text) } catch let error as ValidationError { throw error } catch {
                    Failure.exit(error)
                }
            }
            let fields = schema.recordTypes.reduce(0) { $0 + $1.fields.count }
            print("\(file): valid: \(schema.recordTypes.count) record type\(schema.recordTypes.count == 1 ? "" : "s"), \(fields) field\(fields == 1 ? "" : "s"), \(schema.roles.count) custom role\(schema.roles.count == 1 ? "" : "s")")
        }
    }

    struct Deploy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Promote development's schema to production (the Console's Deploy Schema Changes).",
            discussion: "All or nothing: refused if it would remove a production record type or field or change a field's type.")

        @OptionGroup var target: Target

        func run() async throws {
            do {
                SchemaCommand.printChanges(try await target.client().schema(.deploy), none: "deployed")
            } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Return development's schema to production's and delete all development data.",
            discussion: "Asks you to type the container ID first; scripts pass it with --confirm.")

        @Option(help: ArgumentHelp("The container ID, confirming the deletion without asking.", valueName: "container")) var confirm: String?
        @OptionGroup var target: Target

        func run() async throws {
            do {
                let client = try await target.client()
                let container = client.configuration.container
                var typed = confirm
                if typed == nil {
                    guard isatty(0) != 0 else { throw ValidationError("reset deletes all development data: confirm with --confirm \(container)") }
                    print("This deletes every development record, zone and subscription of \(container).")
                    print("Type the container ID to go on: ", terminator: "")
                    fflush(nil)
                    typed = readLine()
                }
                guard typed == container else { throw ValidationError("not confirmed (expected \(container)); nothing was changed") }
                SchemaCommand.printChanges(try await client.schema(.reset), none: "reset: development had no data")
            } catch let error as ValidationError { throw error } catch { Failure.exit(error) }
        }
    }
}
