import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The XDG base directories: `$XDG_*_HOME` when set and absolute, else under `$HOME` (Foundation's
/// home directory reads the passwd entry on Linux and ignores `$HOME`, so it is the last resort).
public enum XDG {
    public static func cacheHome() -> String { base("XDG_CACHE_HOME", ".cache") }
    public static func stateHome() -> String { base("XDG_STATE_HOME", ".local/state") }
    public static func dataHome() -> String { base("XDG_DATA_HOME", ".local/share") }
    public static func configHome() -> String { base("XDG_CONFIG_HOME", ".config") }

    public static func home() -> String {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        return home.isEmpty ? FileManager.default.homeDirectoryForCurrentUser.path : home
    }

    static func base(_ variable: String, _ fallback: String) -> String {
        // The spec: a relative path in the variable is invalid and ignored.
        if let value = ProcessInfo.processInfo.environment[variable], value.hasPrefix("/") { return value }
        return Paths.join(home(), fallback)
    }
}
