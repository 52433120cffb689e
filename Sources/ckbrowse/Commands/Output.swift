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
import RecordBrowser
import TerminalUI

/// How the headless commands print: JSON (one object per line, for `jq`) or an aligned table.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case json, table
}

/// Output options shared by the read commands.
struct OutputOptions: ParsableArguments {
    @Option(help: "json (one object per line) or table. Default: table on a terminal, json otherwise.")
    var output: OutputFormat?
    @Flag(help: "Print one JSON document instead of one object per line: an array of the objects (changes: an object with its records, syncToken and moreComing).")
    var json = false

    var format: OutputFormat { json ? .json : output ?? (clibc_isatty(1) != 0 ? .table : .json) }
}

/// Everything the commands print goes through here, so no text from a server (a record's value, a zone
/// name, an error's reason) can drive the terminal: text with `TerminalText.visible`'s escapes (`\e`,
/// `\u{202E}`, …), JSON with the same characters as `\uXXXX` (`TerminalText.json`). JSON is escaped in a
/// pipe too: it is the same JSON value either way, and output saved to a file or passed through `cat` or
/// `tee` reaches a terminal later just as safely.
enum Out {
    /// The bytes of an input file the commands read (`-`: standard input); nil when it cannot be read.
    static func input(_ file: String) -> Data? {
        file == "-" ? Data(FileOutput.readStandardInput()) : FileManager.default.contents(atPath: file)
    }

    /// One line of text on standard output; `allowing: .lines` keeps newlines and tabs (multi-line text).
    static func line(_ text: String, allowing: TerminalText.Allowed = [], terminator: String = "\n") {
        print(TerminalText.visible(text, allowing: allowing), terminator: terminator)
    }

    /// A JSON value on one line (compact), or pretty-printed.
    static func json(_ value: JSON, pretty: Bool = false) {
        print(TerminalText.json(pretty ? value.prettyPrinted() : value.text))
    }

    /// A line on standard error (a warning, a failure: `ckbrowse: …`).
    static func error(_ text: String) {
        FileOutput.standardError.write(TerminalText.visible(text) + "\n")
    }
}

/// Writes rows as JSON lines or as an aligned table (columns sized to their content, the last one cut
/// to the terminal's width).
struct Printer {
    let format: OutputFormat
    let columns: [String]
    /// One JSON array at the end instead of JSON lines as they come (`--json`).
    let asArray: Bool
    /// A table row: cells under the columns, or an error, which says what it is across the row instead
    /// of putting its code under a column that means something else (`missing-one  error: NOT_FOUND …`).
    private enum Row { case cells([String]), failure(name: String, text: String) }
    private var rows: [Row] = []
    private var items: [JSON] = []

    init(format: OutputFormat, columns: [String], asArray: Bool = false) {
        self.format = format
        self.columns = columns
        self.asArray = asArray && format == .json
    }

    init(_ options: OutputOptions, columns: [String]) {
        self.init(format: options.format, columns: columns, asArray: options.json)
    }

    /// One item: its JSON (printed at once in JSON-lines mode) and its table cells.
    mutating func add(json: JSON, cells: @autoclosure () -> [String]) {
        switch format {
        case .json where asArray: items.append(json)
        case .json: Out.json(json)
        case .table: rows.append(.cells(cells().map { TerminalText.visible($0) }))
        }
    }

    /// A record, a tombstone or a record's error.
    mutating func add(record result: RecordResult) {
        if case .failure(let e) = result {
            add(json: result.json, failure: e.recordName ?? "?", code: e.serverErrorCode, reason: e.reason)
        } else {
            add(json: result.json, cells: Cells.record(result))
        }
    }

    /// A failed item: its JSON (the error dictionary) and, in a table, its name then `error: CODE (reason)`.
    mutating func add(json: JSON, failure name: String, code: ServerErrorCode, reason: String?) {
        switch format {
        case .json where asArray: items.append(json)
        case .json: Out.json(json)
        case .table: rows.append(.failure(name: TerminalText.visible(name), text: TerminalText.visible(Cells.failure(code, reason))))
        }
    }

    func finish() {
        if asArray { Out.json(.array(items)) }
        guard format == .table else { return }
        var widths = columns.map(TextWidth.width)
        for row in rows {
            switch row {
            case .cells(let cells):
                for (i, cell) in cells.enumerated() where i < widths.count { widths[i] = max(widths[i], TextWidth.width(cell)) }
            case .failure(let name, _): widths[0] = max(widths[0], TextWidth.width(name))
            }
        }
        let terminalWidth = Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 160
        func line(_ cells: [String]) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                let last = i == cells.count - 1
                out += last ? TextWidth.truncate(cell, to: max(10, terminalWidth - TextWidth.width(out))) : TextWidth.fit(cell, to: widths[i]) + "  "
            }
            return out
        }
        print(line(columns))
        for row in rows {
            switch row {
            case .cells(let cells): print(line(cells))
            case .failure(let name, let text): print(line([name, text]))
            }
        }
    }
}

/// Progress on stderr, only when stderr is a terminal.
struct Progress {
    let enabled = clibc_isatty(2) != 0

    func update(_ text: String) {
        guard enabled else { return }
        FileOutput.standardError.write("\r\u{1B}[K\(TerminalText.visible(text))")
    }

    func done() {
        guard enabled else { return }
        FileOutput.standardError.write("\r\u{1B}[K")
    }
}

enum Cells {
    static func record(_ result: RecordResult) -> [String] {
        switch result {
        case .record(let r):
            let fields = r.fields.keys.sorted().map { "\($0)=\(Format.scalar(r.fields[$0]!).replacing("\n", with: "⏎"))" }.joined(separator: " ")
            return [r.recordName, r.recordType ?? "", r.recordChangeTag ?? "", Format.short(r.modified?.timestamp), fields]
        case .deleted(let name, _):
            return [name, "", "", "deleted", ""]
        case .failure(let e):
            return [e.recordName ?? "?", failure(e.serverErrorCode, e.reason)]
        }
    }

    /// How an error reads in a table row and on standard error: `error: NOT_FOUND (Record not found)`.
    static func failure(_ code: ServerErrorCode, _ reason: String?) -> String {
        "error: \(code.rawValue)" + (reason.map { $0.isEmpty ? "" : " (\($0))" } ?? "")
    }

    static let recordColumns = ["RECORD NAME", "TYPE", "TAG", "MODIFIED", "FIELDS"]
}

/// Maps failures to the documented exit statuses and one line on stderr.
enum Failure {
    /// The exit status for per-item errors, as for a request's: 4 authentication, 3 not found, else 1;
    /// nil for none.
    static func status(_ codes: [ServerErrorCode]) -> Int32? {
        guard !codes.isEmpty else { return nil }
        if codes.contains(where: { $0 == .authenticationRequired || $0 == .authenticationFailed }) { return ExitStatus.authentication }
        if codes.allSatisfy({ $0 == .notFound || $0 == .zoneNotFound }) { return ExitStatus.notFound }
        return ExitStatus.failure
    }

    static func exit(_ error: any Error) -> Never {
        let status: Int32
        var message = String(describing: error)
        if let error = error as? CloudKitError {
            message = error.description
            switch error.serverErrorCode {
            case .authenticationRequired?, .authenticationFailed?: status = ExitStatus.authentication
            case .notFound?, .zoneNotFound?: status = ExitStatus.notFound
            case .conflict?: status = ExitStatus.conflict
            default: status = ExitStatus.failure
            }
        } else if let error = error as? MissingCredentials {
            message = error.description
            status = ExitStatus.authentication
        } else if let error = error as? BrowserFailure {
            message = error.message
            status = ExitStatus.usage
        } else {
            status = ExitStatus.failure
        }
        Out.error("ckbrowse: \(message)")
        exitProcess(status)
    }
}

/// Ends the process with `status` (libc's `exit`, which a command's own `exit` method would hide).
func exitProcess(_ status: Int32) -> Never {
    #if canImport(Glibc)
    Glibc.exit(status)
    #elseif canImport(Musl)
    Musl.exit(status)
    #else
    Darwin.exit(status)
    #endif
}
