import BrowserRuntime
import CloudKitModels
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RecordBrowser

/// A host without a terminal: copies are kept, quitting does nothing, and `$EDITOR` is not run —
/// unless an `editor` is given: it plays the user in the editor (the file's text in, the saved text
/// out; nil: the file could not be read). The test double the headless runs use (`BrowserLoop.settle`
/// in the tests and the benchmarks); the terminal app's host is its own.
public final class HeadlessHost: EffectHost, @unchecked Sendable {
    private let lock = Lock()
    private var copiedTexts: [String] = []
    private var late: [BrowserEvent] = []
    private var editedTexts: [String] = []
    private let editor: (@Sendable (String) -> String?)?

    public init(editor: (@Sendable (String) -> String?)? = nil) {
        self.editor = editor
    }

    /// The texts handed to the editor, in order.
    public var editorTexts: [String] { lock.withLock { editedTexts } }

    public var copied: [String] { lock.withLock { copiedTexts } }
    /// Events delivered on their own (none in headless runs, which do not start the long-poll).
    public var delivered: [BrowserEvent] { lock.withLock { late } }

    public func copy(_ text: String) async { lock.withLock { copiedTexts.append(text) } }
    public func edit(_ edit: JSONEdit) async -> BrowserEvent? {
        guard let editor else { return nil }
        lock.withLock { editedTexts.append(edit.text) }
        return .jsonEdited(edit, edited: editor(edit.text), status: 0)
    }
    public func quit() async {}
    public func deliver(_ event: BrowserEvent) async { lock.withLock { late.append(event) } }
}
