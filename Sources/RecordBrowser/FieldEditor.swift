import CloudKitModels
import TerminalUI

/// The inline editor of one field: text with a cursor, the field's type, and the last validation
/// error (shown in place; nothing is staged until the text parses as the type).
public struct FieldEditor: Sendable, Hashable {
    public var field: String
    public var type: FieldType
    /// The value before editing (nil: a field the record does not have yet).
    public var original: FieldValue?
    public var text: [Character]
    /// Insertion point, 0 ... text.count.
    public var cursor: Int
    public var error: String?
    /// Editing one element of a list field (`type` is then the element's type).
    public var element: ElementEdit?

    public enum ElementEdit: Sendable, Hashable {
        /// Element `index` is replaced.
        case replace(Int)
        /// A new element goes in at `index`.
        case insert(Int)
    }

    public init(field: String, type: FieldType, original: FieldValue?, text: String) {
        self.field = field
        self.type = type
        self.original = original
        self.text = Array(text)
        self.cursor = self.text.count
    }

    public var string: String { String(text) }

    /// Applies an editing key; returns false for keys the editor does not handle.
    mutating func edit(_ key: Key) -> Bool {
        switch key {
        case .ctrl("o"):
            // A new line (STRING values and lists take several lines; Enter stages).
            text.insert("\n", at: cursor)
            cursor += 1
        case .up, .down:
            let start = lineStart(cursor)
            let column = cursor - start
            if key == .up {
                guard start > 0 else { return true }
                let previous = lineStart(start - 1)
                cursor = min(previous + column, start - 1)
            } else {
                let end = lineEnd(cursor)
                guard end < text.count else { return true }
                cursor = min(end + 1 + column, lineEnd(end + 1))
            }
        default:
            guard TextEditing.apply(key, &text, &cursor) else { return false }
        }
        error = nil
        return true
    }

    func lineStart(_ index: Int) -> Int {
        var i = index
        while i > 0 && text[i - 1] != "\n" { i -= 1 }
        return i
    }

    func lineEnd(_ index: Int) -> Int {
        var i = index
        while i < text.count && text[i] != "\n" { i += 1 }
        return i
    }

}

/// A yes/no question shown on the hint line.
public enum Confirmation: Sendable, Hashable {
    case discardAll
    /// Esc in the conflict prompt: leave it, dropping the resolutions chosen so far?
    case abortConflicts
    /// `:query` that the schema says CloudKit will refuse (`reason`): send it anyway? Else the
    /// command line comes back with `text` to fix.
    case refusedQuery(text: String, zone: ZoneID, reason: String)
}

/// A whole-record edit in `$EDITOR`: the text handed to the editor, and the record it was made from.
public struct JSONEdit: Sendable, Hashable {
    /// What the file edits.
    public enum Subject: Sendable, Hashable {
        /// A record's fields: the record as the server sent it (the base, unless already staged).
        case fields(ZoneKey, Record)
        /// A subscription of the database `scope` names: `base` is the server's (nil for a new one).
        case subscription(Scope, base: Subscription?)
    }

    public var subject: Subject
    /// The file's content: a `//` header (with the last error, if any) and the JSON.
    public var text: String

    public init(subject: Subject, text: String) {
        self.subject = subject
        self.text = text
    }

    public init(zone: ZoneKey, record: Record, text: String) {
        self.init(subject: .fields(zone, record), text: text)
    }
}
