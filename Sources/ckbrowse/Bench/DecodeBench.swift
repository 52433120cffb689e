import ArgumentParser
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

/// Decodes a 200-record records/changes page with the fast decoder and with Foundation's JSONDecoder,
/// and runs CPython's `json.loads` on the same bytes in the same run.
struct DecodeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode speed of a records/changes page: fast decoder vs JSONDecoder vs CPython json.loads."
    )

    @Option(help: "Records in the page.") var records = 200
    @Option(help: "Timed repetitions per figure (the median is printed).") var runs = 9
    @Option(help: "Decodes per repetition.") var iterations = 50
    @Option(help: "Python interpreter for the comparison (skipped if missing).") var python = "python3"
    @Flag(help: "Print the page's JSON and exit.") var dump = false

    func run() async throws {
        let page = SamplePage.make(records: records)
        let bytes = page.json.bytes
        if dump {
            print(String(decoding: bytes, as: UTF8.self))
            return
        }
        let megabytes = Double(bytes.count) / 1_000_000
        print("page: \(records) records, \(bytes.count) bytes (\(bytes.count / max(records, 1)) bytes/record)")

        // Both decoders must agree before their speed means anything.
        let fast = try RecordChangesPage.decode(from: bytes)
        let foundation = try JSONDecoder().decode(RecordChangesPage.self, from: Data(bytes))
        guard fast == foundation, fast == page else {
            throw ValidationError("the fast decoder and JSONDecoder disagree on the benchmark page")
        }

        var rows: [(String, Double)] = []
        let fastSeconds = await medianSeconds(runs, warmUp: true) {
            for _ in 0..<iterations { _ = try? RecordChangesPage.decode(from: bytes) }
        } / Double(iterations)
        rows.append(("fast decoder (bytes → RecordChangesPage)", fastSeconds))
        let parseSeconds = await medianSeconds(runs, warmUp: true) {
            for _ in 0..<iterations { _ = try? JSON(parsing: bytes) }
        } / Double(iterations)
        rows.append(("fast parser only (bytes → JSON)", parseSeconds))
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let foundationIterations = max(1, iterations / 5)
        let foundationSeconds = await medianSeconds(runs, warmUp: true) {
            for _ in 0..<foundationIterations { _ = try? decoder.decode(RecordChangesPage.self, from: data) }
        } / Double(foundationIterations)
        rows.append(("Foundation JSONDecoder (→ RecordChangesPage)", foundationSeconds))
        let pythonSeconds = try? pythonLoads(bytes: bytes)
        if let pythonSeconds { rows.append(("CPython json.loads (→ dicts)", pythonSeconds)) }

        for (name, seconds) in rows {
            let mbps = megabytes / seconds
            let rps = Double(records) / seconds
            print(pad(name, 46) + pad(String(cFormat: "%8.1f MB/s", mbps), 14) + String(cFormat: "%12.0f records/s", rps))
        }
        if let pythonSeconds {
            print(String(cFormat: "ratio fast decoder / CPython json.loads: %.2fx (target ≥ 1.00)", pythonSeconds / fastSeconds))
        } else {
            print("CPython not found: comparison skipped")
        }
        print(String(cFormat: "ratio fast decoder / JSONDecoder: %.2fx", foundationSeconds / fastSeconds))
    }

    func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }

    /// Seconds per `json.loads` of the same bytes, median of the same number of runs.
    func pythonLoads(bytes: [UInt8]) throws -> Double {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ckbrowse-bench-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("page.json")
        try Data(bytes).write(to: file)
        let script = """
            import json, sys, time
            data = open(sys.argv[1], 'rb').read()
            runs, n = int(sys.argv[2]), int(sys.argv[3])
            json.loads(data)
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                for _ in range(n): json.loads(data)
                times.append((time.perf_counter() - t) / n)
            times.sort()
            print(times[len(times) // 2])
            """
        let scriptFile = dir.appendingPathComponent("loads.py"), outputFile = dir.appendingPathComponent("seconds.txt")
        try Data(script.utf8).write(to: scriptFile)
        func quoted(_ s: String) -> String { "'" + s.replacing("'", with: "'\\''") + "'" }
        let command = (["/usr/bin/env", python, scriptFile.path, file.path, String(runs), String(iterations)].map(quoted) + [">", quoted(outputFile.path), "2>/dev/null"]).joined(separator: " ")
        guard clibc_run_shell(command) == 0, let output = FileManager.default.contents(atPath: outputFile.path),
            let seconds = Double(String(decoding: output, as: UTF8.self).trimmingWhitespace())
        else { throw ValidationError("python failed") }
        return seconds
    }
}
