import ArgumentParser
import BrowserRuntime
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

/// Marks and bulk edits (issue 32) through the headless browser, its cache and an in-process
/// `serve`: `*` and `d` on 10,000 records (time to mark, to stage), the commit typed and sent (its
/// requests and time), then `:export` of 100,000 records (time and peak memory).
struct BulkBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bulk", abstract: "Mark and stage 10k deletions, commit them, export 100k records (time, requests, peak memory).")

    @Option(help: "Records marked, deleted and committed.") var deletions = 10_000
    @Option(help: "Records exported.") var exported = 100_000

    func run() async throws {
        print("filling a zone with \(deletions) records…")
        let small = try await BenchContainer.make(records: deletions)
        defer { small.remove() }
        var (browser, _) = try await small.browser()
        await browser.open(zone: "Big")
        await browser.send(.key(.char("G")))
        print("loaded \(browser.state.list?.total ?? 0) records")

        var start = Date()
        await browser.send(.key(.char("*")))
        let markTime = Date().timeIntervalSince(start)
        let marked = Browser.marks(browser.state).count
        start = Date()
        await browser.send(.key(.char("d")))
        let stageTime = Date().timeIntervalSince(start)
        print(String(cFormat: "* marked %d records in %.0f ms; d staged %d deletions in %.0f ms (one cache read, the delete impact scan included)",
                     marked, markTime * 1000, browser.state.staged.operations.count, stageTime * 1000))

        await browser.send(.key(.char("c")))
        let requests = browser.state.commit?.plan.requests.count ?? 0
        small.traffic.reset()
        start = Date()
        for c in String(browser.state.staged.operations.count) { await browser.send(.key(.char(c))) }
        await browser.send(.key(.enter))
        let commitTime = Date().timeIntervalSince(start)
        print(String(cFormat: "commit: %d atomic requests of at most 200 (%d requests sent), %.2f s; %d left staged; ",
                     requests, small.traffic.snapshot.requests, commitTime, browser.state.staged.operations.count) + (browser.state.message ?? ""))

        print("filling a zone with \(exported) records…")
        let big = try await BenchContainer.make(records: exported)
        defer { big.remove() }
        var (exporter, _) = try await big.browser()
        await exporter.open(zone: "Big")
        await exporter.send(.key(.char("G")))
        print("loaded \(exporter.state.list?.total ?? 0) records")
        for name in ["export.jsonl", "export.csv"] {
            let path = big.directory + "/" + name
            resetPeak()
            let before = residentBytes()
            start = Date()
            await exporter.send(.key(.char(":")))
            for c in "export \(path)" { await exporter.send(.key(.char(c))) }
            await exporter.send(.key(.enter))
            let time = Date().timeIntervalSince(start)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            print("\(name): \(exporter.state.message ?? "?")" + String(cFormat: " in %.2f s, %.1f MB written; resident %.1f MB before, peak %.1f MB during (%+.1f MB)",
                         time, Double(size) / 1e6, Double(before) / 1e6, Double(peakBytes()) / 1e6,
                         Double(peakBytes() - before) / 1e6))
        }
    }

    /// Peak resident memory of this process since the last reset (Linux: VmHWM).
    func peakBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kb = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kb * 1024
    }

    /// Resets the peak to the current resident size (Linux: 5 to /proc/self/clear_refs).
    func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}
