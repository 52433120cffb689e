import BrowserRuntime
import Foundation
import RecordBrowser

/// A host without a terminal: copies are kept, `$EDITOR` is not run, quitting does nothing. The test
/// double the headless runs use (`BrowserLoop.settle` in the tests and the benchmarks); the terminal
/// app's host is its own.
public final class HeadlessHost: EffectHost, @unchecked Sendable {
    private let lock = NSLock()
    private var copiedTexts: [String] = []
    private var late: [BrowserEvent] = []

    public init() {}

    public var copied: [String] { lock.withLock { copiedTexts } }
    /// Events delivered on their own (none in headless runs, which do not start the long-poll).
    public var delivered: [BrowserEvent] { lock.withLock { late } }

    public func copy(_ text: String) async { lock.withLock { copiedTexts.append(text) } }
    public func edit(_ edit: JSONEdit) async -> BrowserEvent? { nil }
    public func quit() async {}
    public func deliver(_ event: BrowserEvent) async { lock.withLock { late.append(event) } }
}
