import CLibc
import CNcursesw
import TerminalUI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the terminal could not be opened.
public struct TerminalError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// How colours are used.
public enum ColorMode: Sendable {
    /// As many as the terminal has (256, then 8); none for terminals without colour.
    case automatic
    /// Attributes only (`NO_COLOR`).
    case none
}

/// The curses backend: draws `CellGrid`s with ncursesw and decodes keys. Every call happens on the main
/// actor: curses is not thread-safe.
@MainActor
public final class CursesTerminal: TerminalBackend {
    private var screenPointer: OpaquePointer?
    private var window: UnsafeMutablePointer<WINDOW>?
    private var previous: CellGrid?
    /// Escape sequences curses did not decode (and an ESC split from the rest of its sequence).
    private var decoder = KeyDecoder()
    private var pairs: [Int64: Int32] = [:]
    private let colors: Int
    private(set) public var active = false

    /// Opens the terminal on stdin/stdout. Throws (never exits) when they are not a terminal or TERM
    /// is unusable; falls back to xterm-256color for terminal types missing from terminfo.
    public init(colorMode: ColorMode = .automatic) throws {
        guard clibc_isatty(0) != 0, clibc_isatty(1) != 0 else {
            throw TerminalError(description: "standard input and output must be a terminal")
        }
        clibc_setup_utf8_locale()
        guard let term = getenv("TERM").map({ String(cString: $0) }), !term.isEmpty else {
            throw TerminalError(description: "TERM is not set; set it to your terminal type (e.g. xterm-256color)")
        }
        if term == "dumb" {
            throw TerminalError(description: "TERM=dumb cannot address the cursor; use a full terminal (xterm, tmux, screen, linux)")
        }
        cn_crash_guard_save_tty(0)
        var pointer = newterm(nil, cn_stdout(), cn_stdin())
        if pointer == nil {
            pointer = newterm("xterm-256color", cn_stdout(), cn_stdin())
            if pointer == nil { throw TerminalError(description: "cannot open terminal type '\(term)'") }
        }
        screenPointer = pointer
        window = cn_stdscr()
        _ = cn_crash_guard_install()
        raw()
        Self.setModes(window)
        set_escdelay(25)
        if colorMode == .automatic && has_colors() {
            start_color()
            use_default_colors()
            colors = Int(cn_colors())
        } else {
            colors = 0
        }
        active = true
    }

    /// A headless terminal of a given type and size writing to a file (benchmarks and tests: what the
    /// terminal would receive, without a TTY).
    public init(termType: String, outputPath: String, width: Int, height: Int) throws {
        clibc_setup_utf8_locale()
        setenv("LINES", String(height), 1)
        setenv("COLUMNS", String(width), 1)
        guard let output = fopen(outputPath, "w"), let input = fopen("/dev/null", "r") else {
            throw TerminalError(description: "cannot open \(outputPath)")
        }
        outputFile = output
        guard let pointer = newterm(termType, output, input) else { throw TerminalError(description: "cannot open terminal type '\(termType)'") }
        screenPointer = pointer
        window = cn_stdscr()
        Self.setModes(window)
        start_color()
        use_default_colors()
        colors = Int(cn_colors())
        active = true
    }

    private var outputFile: UnsafeMutablePointer<FILE>?
    /// Whether the terminal's cursor is shown (a frame with a cursor position shows it).
    private var cursorShown: Bool?

    /// The modes a real and a headless terminal share: keys unechoed, unbuffered and decoded, reads
    /// that never block; and, until a frame places the cursor, no move back to a cursor spot after each
    /// update (`leaveok`).
    private static func setModes(_ window: UnsafeMutablePointer<WINDOW>?) {
        noecho()
        nonl()
        keypad(window, true)
        nodelay(window, true)
        leaveok(window, true)
    }

    /// Bytes written so far by a headless terminal.
    public var bytesWritten: Int {
        guard let outputFile else { return 0 }
        fflush(outputFile)
        return Int(ftell(outputFile))
    }

    /// Makes the next `present` repaint the whole screen (as after Ctrl-L).
    public func forceFullRedraw() {
        previous = nil
        clearok(cn_curscr(), true)
    }

    public var size: (width: Int, height: Int) {
        guard let window else { return (80, 24) }
        return (Int(getmaxx(window)), Int(getmaxy(window)))
    }

    public func invalidate() { previous = nil }

    /// Whether the terminal shows this frame already (presenting it would change nothing).
    public func shows(_ screen: CellGrid) -> Bool { active && previous == screen }

    /// Writes the cells of changed rows and lets `doupdate` send the minimal output.
    ///
    /// A cell curses can hold as it is (one spacing scalar of the cell's width and up to four zero-width
    /// ones: `e` + U+0301, ᄒ + ᅡ + ᆫ, 東) goes through `setcchar`. Any other cluster (a ZWJ sequence, a
    /// flag, a skin tone, a keycap, ❤️, a conjunct, more than `CCHARW_MAX` scalars) would be cut by
    /// `setcchar` or counted at another width, so curses gets a stand-in of the same width (private-use
    /// characters derived from the cluster, so two different clusters never look alike to its diff and
    /// scroll detection) and, after `doupdate`, the cluster's UTF-8 is written over it by absolute
    /// address (`cn_put_overlay`), in every changed row.
    public func present(_ screen: CellGrid) {
        guard active, let window else { return }
        let rows = screen.changedRows(since: previous)
        let sameSize = previous.map { $0.width == screen.width && $0.height == screen.height } ?? false
        if !sameSize { werase(window) }
        var buffer = [wchar_t](repeating: 0, count: 8)
        var overlays: [(x: Int, y: Int, cell: Cell)] = []
        for y in rows {
            for x in 0..<screen.width {
                let cell = screen[x, y]
                if cell.isContinuation { continue }
                let native = Self.cursesCell(cell, into: &buffer)
                // The bottom-right cell cannot be written without scrolling on some terminals.
                let lastColumn = x + max(1, Int(cell.width)) - 1
                let bottomRight = y == screen.height - 1 && lastColumn >= screen.width - 1
                if !native && !bottomRight { overlays.append((x, y, cell)) }
                if y == screen.height - 1 && x == screen.width - 1 { continue }
                if sameSize, let old = previous, old[x, y] == cell { continue }
                let (attributes, pair) = attributes(for: cell.style)
                if native {
                    _ = cn_put_cell(window, Int32(y), Int32(x), buffer, attributes, pair)
                    continue
                }
                // The stand-in: one private-use character (one column each) per column of the cluster; blanks
                // in the bottom-right corner, where no overlay is written (it would scroll some terminals).
                let seed = Self.hash(cell.text)
                for column in 0..<Int(cell.width) where !(bottomRight && x + column == screen.width - 1) {
                    let mixed = (seed &+ UInt64(column) &* 0x9E37_79B9_7F4A_7C15) >> 17
                    buffer[0] = bottomRight ? 32 : wchar_t(bitPattern: 0xF0000 + UInt32(mixed % 0xFFFE))
                    buffer[1] = 0
                    _ = cn_put_cell(window, Int32(y), Int32(x + column), buffer, attributes, pair)
                }
            }
        }
        // The cursor stands where the frame says (the caret, else the selected row), or is hidden.
        let cursor = screen.cursor.flatMap { $0.x >= 0 && $0.x < screen.width && $0.y >= 0 && $0.y < screen.height ? $0 : nil }
        if cursorShown != (cursor != nil) {
            cursorShown = cursor != nil
            leaveok(window, cursor == nil)
            curs_set(cursor != nil ? 1 : 0)
        }
        if let cursor { wmove(window, Int32(cursor.y), Int32(cursor.x)) }
        wnoutrefresh(window)
        doupdate()
        for overlay in overlays {
            let (attributes, pair) = attributes(for: overlay.cell.style)
            _ = cn_put_overlay(screenPointer, outputFile ?? cn_stdout(), Int32(overlay.y), Int32(overlay.x), overlay.cell.text, Int32(overlay.cell.width), attributes, pair)
        }
        if let cursor, !overlays.isEmpty {
            // An overlay left the cursor at its cell (and told curses so): back to where it stands.
            wmove(window, Int32(cursor.y), Int32(cursor.x))
            wnoutrefresh(window)
            doupdate()
        }
        previous = screen
    }

    /// Fills `buffer` (NUL-terminated) with the cell's scalars when curses can hold the cell as it is:
    /// at most `CCHARW_MAX` (5) scalars, the first a spacing one as wide as the cell, the rest zero-width.
    /// A blank or empty cell is a space.
    static func cursesCell(_ cell: Cell, into buffer: inout [wchar_t]) -> Bool {
        var count = 0
        for scalar in cell.text.unicodeScalars {
            if count == 5 { return false }
            let w = TextWidth.width(of: scalar)
            if count == 0 ? w != Int(cell.width) : w != 0 { return false }
            buffer[count] = wchar_t(bitPattern: scalar.value)
            count += 1
        }
        if count == 0 {
            buffer[0] = 32
            count = 1
        }
        buffer[count] = 0
        return true
    }

    /// FNV-1a over the cluster's UTF-8: the same in every run, so the bytes written are reproducible.
    static func hash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return h
    }

    private func attributes(for style: Style) -> (attr_t, Int32) {
        var attributes = cn_attr_normal()
        if style.bold { attributes |= cn_attr_bold() }
        if style.reverse { attributes |= cn_attr_reverse() }
        if style.underline { attributes |= cn_attr_underline() }
        if style.dim { attributes |= cn_attr_dim() }
        guard colors > 0 else {
            // No colour: a coloured background reads as reverse video.
            if style.background != .default { attributes |= cn_attr_reverse() }
            return (attributes, 0)
        }
        let fg = colorIndex(style.foreground), bg = colorIndex(style.background)
        if fg == -1 && bg == -1 { return (attributes, 0) }
        let key = Int64(fg) << 32 | Int64(UInt32(bitPattern: bg))
        if let pair = pairs[key] { return (attributes, pair) }
        let pair = alloc_pair(fg, bg)
        let result = pair < 0 ? 0 : pair
        pairs[key] = result
        return (attributes, result)
    }

    /// Palette index for the terminal: 256 colours as is, 8 colours folded, -1 for the default.
    private func colorIndex(_ color: Color) -> Int32 {
        switch color {
        case .default: return -1
        case .palette(let index):
            if Int(index) < colors { return Int32(index) }
            if index == 244 { return 7 }
            return Int32(index % 8)
        }
    }

    /// Reads every key waiting on stdin (non-blocking).
    public func readKeys() -> [Key] {
        guard active, let window else { return [] }
        var inputs: [KeyDecoder.Input] = []
        var character: wint_t = 0
        while inputs.count < 256 {
            let result = wget_wch(window, &character)
            if result == ERR { break }
            if result == KEY_CODE_YES {
                if let key = Self.decode(code: Int32(character)) { inputs.append(.key(key)) }
            } else {
                inputs.append(.character(UInt32(character)))
            }
        }
        return decoder.decode(inputs)
    }

    /// An ESC ended the last read: it may start a sequence whose rest has not arrived yet.
    public var holdsEscape: Bool { decoder.isHolding }

    /// No more input came after a held ESC: it was the Esc key.
    public func flushEscape() -> [Key] { decoder.flush() }

    static func decode(code: Int32) -> Key? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_NPAGE: return .pageDown
        case KEY_PPAGE: return .pageUp
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_ENTER: return .enter
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case KEY_BTAB: return .backTab
        case KEY_RESIZE: return .resize
        case KEY_F0 + 1...KEY_F0 + 24: return .function(Int(code - KEY_F0))
        default: return nil
        }
    }

    public static func decode(character: UInt32) -> Key? { KeyDecoder.plain(character) }

    /// Leaves curses for an interactive child (e.g. `$EDITOR`), then restores the screen.
    public func suspend(_ body: () -> Void) {
        guard active, let window else { return body() }
        def_prog_mode()
        endwin()
        body()
        reset_prog_mode()
        keypad(window, true)  // reset_shell_mode cleared keypad mode
        clearok(cn_curscr(), true)
        previous = nil
        cursorShown = nil  // the child may have shown or hidden it
        refresh()
    }

    /// Restores the terminal. Safe to call more than once.
    public func shutdown() {
        guard active else { return }
        active = false
        curs_set(1)
        endwin()
        if let screenPointer { delscreen(screenPointer) }
        screenPointer = nil
        window = nil
    }
}
