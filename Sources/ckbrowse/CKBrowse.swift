import ArgumentParser
import CloudKitWeb

@main
struct CKBrowse: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "ckbrowse",
        abstract: "A terminal record browser for CloudKit Web Services.",
        discussion: """
            Browse zones, change feeds, records and subscriptions of a CloudKit container from a terminal.
            Tokens are read from the environment or a profile; never pass them where `ps` can see them.
            """,
        version: version,
        subcommands: [Browse.self, Zones.self, Changes.self, QueryCommand.self, Get.self, Subscriptions.self, Apply.self, SchemaCommand.self, Serve.self, Bench.self],
        defaultSubcommand: Browse.self
    )

    /// Parses the arguments as `Arguments` reads and orders them (options may stand before the subcommand).
    static func main() async {
        await main(Arguments.normalized(Arguments.current()))
    }
}
