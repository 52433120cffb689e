import TerminalUI

/// The editing keys readline users expect, on text with a cursor (the `:` and `/` line, the inline
/// field editor): Home/End and Ctrl-A/Ctrl-E (line start/end), ←/→, Alt-b/Alt-f and Ctrl-←/Ctrl-→
/// (a word back/forward), Backspace, Delete and Ctrl-D, Ctrl-W (the word before the cursor), Ctrl-U
/// (to the line start), Ctrl-K (to the line end). Lines are separated by "\n".
enum TextEditing {
    /// Applies `key`; false when it is not an editing key.
    static func apply(_ key: Key, _ text: inout [Character], _ cursor: inout Int) -> Bool {
        cursor = max(0, min(cursor, text.count))
        switch key {
        case .char(let c):
            text.insert(c, at: cursor)
            cursor += 1
        case .backspace:
            guard cursor > 0 else { return true }
            text.remove(at: cursor - 1)
            cursor -= 1
        case .delete, .ctrl("d"):
            guard cursor < text.count else { return true }
            text.remove(at: cursor)
        case .left, .ctrl("b"): cursor = max(0, cursor - 1)
        case .right, .ctrl("f"): cursor = min(text.count, cursor + 1)
        case .home, .ctrl("a"): cursor = lineStart(text, cursor)
        case .end, .ctrl("e"): cursor = lineEnd(text, cursor)
        case .alt("b"), .ctrlLeft: cursor = wordStart(text, cursor)
        case .alt("f"), .ctrlRight: cursor = wordEnd(text, cursor)
        case .ctrl("w"):
            let start = wordStart(text, cursor)
            text.removeSubrange(start..<cursor)
            cursor = start
        case .alt("d"):
            let end = wordEnd(text, cursor)
            text.removeSubrange(cursor..<end)
        case .ctrl("u"):
            let start = lineStart(text, cursor)
            text.removeSubrange(start..<cursor)
            cursor = start
        case .ctrl("k"):
            text.removeSubrange(cursor..<lineEnd(text, cursor))
        default:
            return false
        }
        return true
    }

    static func lineStart(_ text: [Character], _ index: Int) -> Int {
        var i = index
        while i > 0 && text[i - 1] != "\n" { i -= 1 }
        return i
    }

    static func lineEnd(_ text: [Character], _ index: Int) -> Int {
        var i = index
        while i < text.count && text[i] != "\n" { i += 1 }
        return i
    }

    static func isWord(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

    /// The start of the word before the cursor (skipping what separates them).
    static func wordStart(_ text: [Character], _ index: Int) -> Int {
        var i = index
        while i > 0 && !isWord(text[i - 1]) { i -= 1 }
        while i > 0 && isWord(text[i - 1]) { i -= 1 }
        return i
    }

    /// The end of the word after the cursor.
    static func wordEnd(_ text: [Character], _ index: Int) -> Int {
        var i = index
        while i < text.count && !isWord(text[i]) { i += 1 }
        while i < text.count && isWord(text[i]) { i += 1 }
        return i
    }
}
