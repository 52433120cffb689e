import CLibc

/// Text from elsewhere (a server, a file, a record) made safe to write to a terminal: the one escaping
/// every screen and every command line output goes through, so a value can never drive the terminal
/// (an OSC 52 clipboard write, a window title, a screen clear) and nothing in it is invisible.
///
/// The notation, one for everything: `\e` (ESC), `\t`, `\n` and `\r` for those four, and Swift's
/// `\u{HEX}` (upper-case hex, no leading zeros) for every other escaped scalar: `\u{7}` (BEL), `\u{7F}`
/// (DEL), `\u{9B}` (C1 CSI), `\u{202E}` (right-to-left override). What is escaped:
///
/// - C0 controls and DEL (newline and tab only where the caller allows them, for multi-line output),
///   and C1 controls (U+0080–U+009F);
/// - format characters (general category Cf: bidi embeddings, overrides and isolates, U+061C, zero-width
///   space, word joiner, invisible operators, U+FEFF, U+180E, soft hyphen, …), line and paragraph
///   separators, and every other default-ignorable code point (Hangul fillers, U+034F, …);
/// - scalars the terminal has no width for (wcwidth < 0: unassigned in its tables), and unassigned
///   scalars;
/// - a combining mark with nothing to combine with (first in its grapheme, or after an escape).
///
/// Kept as they are, because they are part of what a visible character looks like: combining marks
/// after a visible scalar; ZERO WIDTH JOINER (U+200D) between two visible scalars of one grapheme (emoji
/// ZWJ sequences: 👩‍💻); variation selectors (U+FE0E, U+FE0F, …) after a visible scalar (❤️); and the
/// tag characters of an emoji tag sequence (🏴 + tags + U+E007F: the flags of England, Scotland,
/// Wales). Out of context each of these is escaped too.
///
/// A backslash is not escaped, so the display is for reading, not for reversing: `--json` output is the
/// exact channel. Escapes are printable ASCII, one column per character, and applying the escaping
/// again changes nothing (`visible(visible(s)) == visible(s)`), so widths measured on escaped text stay
/// true. Nothing is dropped. Text that is printable ASCII throughout is returned at once.
public enum TerminalText {
    /// Controls a caller lets through as they are (multi-line output: a detail view, a schema file).
    public struct Allowed: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let newline = Allowed(rawValue: 1)
        public static let tab = Allowed(rawValue: 2)
        /// Newlines and tabs: text shown over several lines.
        public static let lines: Allowed = [.newline, .tab]
    }

    /// `text` as a terminal may show it: every scalar that could control the terminal or would be
    /// invisible replaced by its visible escape (see the type's documentation for the notation).
    public static func visible(_ text: String, allowing allowed: Allowed = []) -> String {
        if isPlainASCII(text, allowed) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        let changed = rewrite(text, allowed, into: &out) { scalar, out in out += escape(scalar) }
        return changed ? out : text
    }

    /// Whether `visible(text, allowing:)` would change `text`.
    public static func needsEscaping(_ text: String, allowing allowed: Allowed = []) -> Bool {
        visible(text, allowing: allowed) != text
    }

    /// JSON text (as `JSON`'s writer makes it) with the same characters escaped as JSON escapes,
    /// `\uXXXX` (a surrogate pair above U+FFFF): still valid JSON, and the same JSON value, but a terminal
    /// (or a clipboard) gets no raw control, bidi or invisible character. The writer already escapes C0
    /// controls; this adds DEL, C1 and the invisible and bidi characters inside strings. Newlines and
    /// tabs outside strings (pretty-printing) are kept.
    public static func json(_ text: String) -> String {
        if isPlainASCII(text, .lines) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        let changed = rewrite(text, .lines, into: &out) { scalar, out in
            let value = scalar.value
            if value > 0xFFFF {
                let v = value - 0x10000
                out += jsonEscape(0xD800 + (v >> 10))
                out += jsonEscape(0xDC00 + (v & 0x3FF))
            } else {
                out += jsonEscape(value)
            }
        }
        return changed ? out : text
    }

    /// The visible form of one scalar: `\e`, `\t`, `\n`, `\r`, or `\u{HEX}`.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x1B: return "\\e"
        case 0x09: return "\\t"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        default: return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }

    // MARK: - Classification

    /// What a scalar is to the escaping.
    enum Kind: Equatable {
        /// Shown as it is, and occupies columns.
        case visible
        /// Zero width: shown only after a visible scalar of its grapheme (combining marks).
        case mark
        /// Newline or tab: shown when allowed.
        case newline, tab
        /// U+200D: kept between two visible scalars of one grapheme.
        case joiner
        /// Variation selectors: kept after a visible scalar.
        case selector
        /// U+E0020–U+E007F: kept inside an emoji tag sequence.
        case tag
        /// Always escaped.
        case escaped
    }

    static func kind(_ scalar: Unicode.Scalar) -> Kind {
        let v = scalar.value
        if v < 0x80 {
            if v >= 0x20 && v < 0x7F { return .visible }
            if v == 0x0A { return .newline }
            if v == 0x09 { return .tab }
            return .escaped
        }
        if v < 0xA0 { return .escaped }
        switch v {
        case 0x200D: return .joiner
        case 0xFE00...0xFE0F, 0xE0100...0xE01EF, 0x180B...0x180D, 0x180F: return .selector
        case 0xE0020...0xE007F: return .tag
        default: break
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .format, .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: return .escaped
        default: break
        }
        if properties.isDefaultIgnorableCodePoint { return .escaped }
        let width = clibc_wcwidth(v)
        if width < 0 { return .escaped }
        return width == 0 ? .mark : .visible
    }

    /// Printable ASCII only (and the allowed controls): nothing to escape, checked byte by byte.
    @inline(__always)
    static func isPlainASCII(_ text: String, _ allowed: Allowed) -> Bool {
        let newline = allowed.contains(.newline), tab = allowed.contains(.tab)
        func plain(_ bytes: some Sequence<UInt8>) -> Bool {
            for byte in bytes where byte < 0x20 || byte >= 0x7F {
                if byte == 0x0A && newline { continue }
                if byte == 0x09 && tab { continue }
                return false
            }
            return true
        }
        return text.utf8.withContiguousStorageIfAvailable { plain($0) } ?? plain(text.utf8)
    }

    /// Writes `text` to `out`, each scalar kept or passed to `escape`; answers whether anything was
    /// escaped. Graphemes are judged whole, so a joiner's or selector's context is its own grapheme.
    static func rewrite(_ text: String, _ allowed: Allowed, into out: inout String,
                        escape: (Unicode.Scalar, inout String) -> Void) -> Bool {
        var changed = false
        var scalars: [Unicode.Scalar] = []
        for character in text {
            if let ascii = character.asciiValue, ascii >= 0x20, ascii < 0x7F {
                out.append(character)
                continue
            }
            scalars.removeAll(keepingCapacity: true)
            scalars.append(contentsOf: character.unicodeScalars)
            let tagSequence = isEmojiTagSequence(scalars)
            var afterVisible = false
            for (i, scalar) in scalars.enumerated() {
                let k = kind(scalar)
                let keep: Bool
                switch k {
                case .visible: keep = true
                case .mark, .selector: keep = afterVisible
                case .newline: keep = allowed.contains(.newline)
                case .tab: keep = allowed.contains(.tab)
                case .joiner: keep = afterVisible && i + 1 < scalars.count && kind(scalars[i + 1]) == .visible
                case .tag: keep = tagSequence
                case .escaped: keep = false
                }
                if keep {
                    out.unicodeScalars.append(scalar)
                    // A mark or selector keeps its base's standing; a joiner needs a visible scalar next.
                    if k == .visible { afterVisible = true } else if k != .mark && k != .selector { afterVisible = false }
                } else {
                    escape(scalar, &out)
                    changed = true
                    afterVisible = false
                }
            }
        }
        return changed
    }

    /// 🏴 followed by tag letters or digits and CANCEL TAG (U+E007F): a subdivision flag.
    static func isEmojiTagSequence(_ scalars: [Unicode.Scalar]) -> Bool {
        guard scalars.count >= 3, scalars[0].value == 0x1F3F4, scalars[scalars.count - 1].value == 0xE007F else { return false }
        return scalars.dropFirst().dropLast().allSatisfy { (0xE0030...0xE0039).contains($0.value) || (0xE0061...0xE007A).contains($0.value) }
    }

    private static func jsonEscape(_ unit: UInt32) -> String {
        let hex = String(unit, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
