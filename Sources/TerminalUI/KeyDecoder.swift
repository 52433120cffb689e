/// Turns what the terminal library reads into keys, including the escape sequences it did not know.
///
/// curses decodes the sequences its terminfo entry lists; a terminal that sends others (tmux with
/// TERM=xterm-256color sends Home as `ESC [ 1 ~`, terminfo says `ESC O H`) would otherwise reach the
/// browser as Esc followed by `[`, `1`, `~`: Esc cancels an edit and throws away the typed text, and
/// the rest runs as commands. Here an ESC that starts a CSI (`ESC [`) or SS3 (`ESC O`) sequence is read
/// to its end and becomes the key it names, or nothing when it names none: never Esc. ESC before
/// another character is Alt with it. An ESC at the very end of what was read may be the start of a
/// sequence split across reads: it is held until more input comes or `flush()` says none did.
public struct KeyDecoder: Sendable {
    /// What the terminal library handed over: a key it decoded, or a character.
    public enum Input: Sendable, Hashable {
        case key(Key)
        case character(UInt32)
    }

    private var held: [UInt32] = []

    public init() {}

    /// An ESC (or an unfinished sequence) is held, waiting for the rest.
    public var isHolding: Bool { !held.isEmpty }

    /// Decodes a batch; an unfinished sequence at its end is held for the next batch.
    public mutating func decode(_ inputs: [Input]) -> [Key] {
        var keys: [Key] = []
        var pending = held
        held = []
        func drain(final: Bool) {
            while !pending.isEmpty {
                switch Self.sequence(pending) {
                case .incomplete:
                    if final { return }  // held for the next batch
                    // Interrupted by a decoded key: what was read so far is the Esc the user typed,
                    // followed by ordinary characters.
                    keys.append(.escape)
                    pending.removeFirst()
                case .key(let key, let length):
                    if let key { keys.append(key) }
                    pending.removeFirst(length)
                case .notEscape:
                    keys.append(Self.plain(pending.removeFirst()))
                }
            }
        }
        for input in inputs {
            switch input {
            case .character(let c):
                pending.append(c)
            case .key(let key):
                drain(final: false)
                keys.append(key)
            }
        }
        drain(final: true)
        held = pending
        return keys
    }

    /// Nothing more came: a held ESC was the Esc key (and what followed it, ordinary characters).
    public mutating func flush() -> [Key] {
        guard !held.isEmpty else { return [] }
        var keys: [Key] = [.escape]
        keys += held.dropFirst().map(Self.plain)
        held = []
        return keys
    }

    enum Match: Equatable {
        /// The first character is not ESC.
        case notEscape
        /// ESC and possibly a sequence that has not ended yet.
        case incomplete
        /// `length` characters make one key (nil: a sequence that names no key, dropped).
        case key(Key?, length: Int)
    }

    static func sequence(_ c: [UInt32]) -> Match {
        guard c.first == 0x1B else { return .notEscape }
        guard c.count > 1 else { return .incomplete }
        let second = c[1]
        if second == 0x5B {  // ESC [ : CSI parameters, intermediates, one final byte
            var i = 2
            while i < c.count, (0x20...0x3F).contains(c[i]) { i += 1 }
            guard i < c.count else { return .incomplete }
            guard (0x40...0x7E).contains(c[i]) else { return .key(nil, length: i) }
            let parameters = String(decoding: c[2..<i].map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
            return .key(csi(parameters, final: c[i]), length: i + 1)
        }
        if second == 0x4F {  // ESC O : SS3 and one final byte
            guard c.count > 2 else { return .incomplete }
            return .key(ss3(c[2]), length: 3)
        }
        if second == 0x1B { return .key(.escape, length: 1) }  // Esc pressed twice
        // ESC then a character: Alt with it.
        guard let scalar = Unicode.Scalar(second), second >= 0x20, second != 0x7F else { return .key(.escape, length: 1) }
        return .key(.alt(Character(scalar)), length: 2)
    }

    static func csi(_ parameters: String, final: UInt32) -> Key? {
        let numbers = parameters.split(separator: ";").map { Int($0) ?? 0 }
        let modifier = numbers.count > 1 ? numbers[1] : 1
        let ctrl = modifier == 5
        switch final {
        case 0x41: return .up
        case 0x42: return .down
        case 0x43: return ctrl ? .ctrlRight : .right
        case 0x44: return ctrl ? .ctrlLeft : .left
        case 0x48: return .home
        case 0x46: return .end
        case 0x5A: return .backTab
        case 0x7E:
            switch numbers.first ?? 0 {
            case 1, 7: return .home
            case 4, 8: return .end
            case 3: return .delete
            case 5: return .pageUp
            case 6: return .pageDown
            case 11...15: return .function((numbers.first ?? 11) - 10)
            case 17...21: return .function((numbers.first ?? 17) - 11)
            case 23, 24: return .function((numbers.first ?? 23) - 12)
            default: return nil  // Insert, paste brackets and the like: nothing to do
            }
        default:
            return nil
        }
    }

    static func ss3(_ final: UInt32) -> Key? {
        switch final {
        case 0x41: return .up
        case 0x42: return .down
        case 0x43: return .right
        case 0x44: return .left
        case 0x48: return .home
        case 0x46: return .end
        case 0x4D: return .enter
        case 0x50...0x53: return .function(Int(final) - 0x50 + 1)
        default: return nil
        }
    }

    /// One character outside any sequence.
    public static func plain(_ character: UInt32) -> Key {
        switch character {
        case 0x0D, 0x0A: return .enter
        case 0x1B: return .escape
        case 0x09: return .tab
        case 0x7F, 0x08: return .backspace
        case 0x01...0x1A: return .ctrl(Character(Unicode.Scalar(character + 0x60)!))
        default:
            guard let scalar = Unicode.Scalar(character) else { return .char("\u{FFFD}") }
            return .char(Character(scalar))
        }
    }
}
