/// A colour: the terminal's default, or one of the 256 palette entries (0–7 are the basic eight).
public enum Color: Hashable, Sendable {
    case `default`
    case palette(UInt8)

    public static let black = Color.palette(0)
    public static let red = Color.palette(1)
    public static let green = Color.palette(2)
    public static let yellow = Color.palette(3)
    public static let blue = Color.palette(4)
    public static let magenta = Color.palette(5)
    public static let cyan = Color.palette(6)
    public static let white = Color.palette(7)
    public static let gray = Color.palette(244)
}

/// How a cell looks.
public struct Style: Hashable, Sendable {
    public var foreground: Color
    public var background: Color
    public var bold: Bool
    public var reverse: Bool
    public var underline: Bool
    public var dim: Bool

    public init(
        foreground: Color = .default, background: Color = .default, bold: Bool = false, reverse: Bool = false,
        underline: Bool = false, dim: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.reverse = reverse
        self.underline = underline
        self.dim = dim
    }

    public static let plain = Style()
    public func with(foreground: Color) -> Style { var s = self; s.foreground = foreground; return s }
    public func with(background: Color) -> Style { var s = self; s.background = background; return s }
    public var bolded: Style { var s = self; s.bold = true; return s }
    public var reversed: Style { var s = self; s.reverse = true; return s }
    public var dimmed: Style { var s = self; s.dim = true; return s }
    public var underlined: Style { var s = self; s.underline = true; return s }
}
