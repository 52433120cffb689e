import ArgumentParser
import CloudKitWeb
import TerminalUI

@main
struct CKBrowse: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "ckbrowse",
        abstract: "A terminal record browser for CloudKit Web Services.",
        discussion: """
            Browse zones, change feeds, records and subscriptions of a CloudKit container from a terminal. \
            Tokens are read from the environment or a profile; never pass them where `ps` can see them.
            """,
        version: version,
        subcommands: [Browse.self, Zones.self, Changes.self, QueryCommand.self, Get.self, Subscriptions.self, Apply.self, SchemaCommand.self, Serve.self, Bench.self],
        defaultSubcommand: Browse.self
    )

    /// Parses the arguments as `Arguments` reads and orders them (options may stand before the subcommand).
    /// With none, the browser starts without ArgumentParser: what parsing `[]` gives is `Browse` with every
    /// option unset, and building the command tree to find that out (a `String(describing:)` of every
    /// command's type, reflection and dynamic casts over their properties: each first cast of a type scans
    /// every conformance record of the binary) cost more instructions than anything else before the first
    /// frame (PERFORMANCE.md). Errors end the process as ArgumentParser's `main` ends them.
    static func main() async {
        let arguments = Arguments.normalized(Arguments.current())
        guard arguments.isEmpty else { return await parseAndRun(arguments) }
        do {
            try await Browse.run(ConnectionOptions.Settings())
        } catch {
            exit(withError: error)
        }
    }

    /// ArgumentParser's `main(_:)`, but a `ValidationError` thrown while a command runs (no container
    /// given, a file that cannot be read) is said without a usage text: ArgumentParser would add the
    /// top-level one ("Usage: ckbrowse <subcommand>"), which is not the command's and says nothing of
    /// the mistake. Mistakes in the command line's shape keep their command's usage.
    static func parseAndRun(_ arguments: [String]) async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ValidationError {
            FileOutput.standardError.write("Error: " + TerminalText.visible(error.message) + "\n")
            exit(withError: ExitCode.validationFailure)
        } catch {
            exit(withError: error)
        }
    }
}
