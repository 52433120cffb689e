/// A key press, decoded from the terminal.
public enum Key: Hashable, Sendable, CustomStringConvertible {
    case char(Character)
    case ctrl(Character)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, tab, backTab, backspace, delete
    case function(Int)
    /// Alt (Meta) with a character: ESC then the character.
    case alt(Character)
    /// Ctrl with an arrow (word motion in editors).
    case ctrlLeft, ctrlRight
    /// The terminal changed size.
    case resize

    public var description: String {
        switch self {
        case .char(let c): return String(c)
        case .ctrl(let c): return "Ctrl-\(c)"
        case .up: return "↑"
        case .down: return "↓"
        case .left: return "←"
        case .right: return "→"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .home: return "Home"
        case .end: return "End"
        case .enter: return "Enter"
        case .escape: return "Esc"
        case .tab: return "Tab"
        case .backTab: return "Shift-Tab"
        case .backspace: return "Backspace"
        case .delete: return "Delete"
        case .function(let n): return "F\(n)"
        case .alt(let c): return "Alt-\(c)"
        case .ctrlLeft: return "Ctrl-←"
        case .ctrlRight: return "Ctrl-→"
        case .resize: return "resize"
        }
    }
}

/// Where frames go. The curses backend draws them on a terminal; `MemoryBackend` keeps them for tests.
@MainActor
public protocol TerminalBackend: AnyObject {
    /// Columns and rows.
    var size: (width: Int, height: Int) { get }
    /// Shows a frame, writing only what changed since the last one.
    func present(_ screen: CellGrid)
    /// Forgets the last frame so the next `present` redraws everything.
    func invalidate()
}

/// A backend that keeps frames in memory (ratatui's TestBackend): whole-screen tests without a terminal.
@MainActor
public final class MemoryBackend: TerminalBackend {
    public var size: (width: Int, height: Int)
    public private(set) var frames: [CellGrid] = []
    /// Rows rewritten by the last `present` (what a diffing terminal would send).
    public private(set) var lastChangedRows: [Int] = []

    public init(width: Int, height: Int) { size = (width, height) }

    public var current: CellGrid? { frames.last }

    public func present(_ screen: CellGrid) {
        lastChangedRows = screen.changedRows(since: frames.last)
        frames.append(screen)
        if frames.count > 50 { frames.removeFirst(frames.count - 50) }
    }

    public func invalidate() { frames.removeAll() }
}
