import ArgumentParser
import BrowserCache
import CloudKitLocal
import CloudKitWeb
import Foundation

/// `ckbrowse schema export | validate`: the CloudKit Schema Language (`.ckdb`), as cktool reads and
/// writes it.
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Export or validate a schema in the CloudKit Schema Language (.ckdb, as cktool uses).",
        subcommands: [Export.self, Validate.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the schema of a local data directory (the embedded demo's by default) as a .ckdb file.",
            discussion: """
                The schema is what the local server holds: record types and fields created just in time, each field \
                with the indexes just-in-time creation gives it, each type with the default grants, and Users.
                """)

        @Option(help: "A data directory of `ckbrowse serve` (default: the embedded demo's).") var data: String?
        @Option(help: "The container (default: the demo's).") var container: String = DemoSeed.container
        @Option(help: "development or production.") var environment: CloudKitEnvironment = .development

        func run() async throws {
            let directory = data ?? (XDG.dataHome() as NSString).appendingPathComponent("ckbrowse/demo")
            guard FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("cloudkit.sqlite")) || data == nil else {
                throw ValidationError("no ckbrowse data in \(directory)")
            }
            // The embedded demo is seeded on first use, as the browser would; a serve directory is read as it is.
            var configuration = LocalServerConfiguration()
            if data == nil { DemoSeed.configure(&configuration) }
            let service = try LocalCloudKit(store: try Store(directory: directory), configuration: configuration)
            if data == nil { try await DemoSeed.seedIfNeeded(service, environment: environment) }
            print(SchemaLanguage.write(try service.inferredSchema(container: container, environment: environment)), terminator: "")
        }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a .ckdb file: its syntax and the rules a file can break on its own.",
            discussion: "Exit status: 0 valid, 1 invalid (the first problem is printed with its line and column), 64 bad usage.")

        @Argument(help: "The .ckdb file.") var file: String

        func run() async throws {
            let text: String
            do { text = try String(contentsOfFile: file, encoding: .utf8) } catch { throw ValidationError("cannot read \(file)") }
            do {
                let schema = try SchemaLanguage.parse(text)
                let fields = schema.recordTypes.reduce(0) { $0 + $1.fields.count }
                print("\(file): valid: \(schema.recordTypes.count) record type\(schema.recordTypes.count == 1 ? "" : "s"), \(fields) field\(fields == 1 ? "" : "s"), \(schema.roles.count) custom role\(schema.roles.count == 1 ? "" : "s")")
            } catch {
                FileHandle.standardError.write(Data("\(file):\(error.line):\(error.column): \(error.message)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
