import ArgumentParser

/// `ckbrowse bench …`: benchmarks that print figures (never timed tests).
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a benchmark and print its figures (build with -c release for real numbers).",
        subcommands: [DecodeBench.self, ServeBench.self, TerminalBench.self, MemoryBench.self, ReopenBench.self, KeypressBench.self, NetworkBench.self, BulkBench.self]
    )
}
