#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CloudKitWeb
import TerminalUI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure said in words, not a mistake in the command line: ArgumentParser prints "Error: " and
/// the words and exits with 1, where a `ValidationError` would add a usage text as well. The words
/// pass through `TerminalText.visible`, as everything the command line prints does.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ words: String) { description = TerminalText.visible(words) }
}

/// Plain words for an error of the file system or of a system call. Foundation's errors print as
/// `Error Domain=NSCocoaErrorDomain Code=4 "…" UserInfo={NSURL=…, NSUnderlyingError=…}`.
enum SystemErrorWords {
    static func words(_ error: any Error) -> String {
        if let cocoa = error as? CocoaError {
            switch cocoa.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory"
            case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
            case .fileWriteOutOfSpace: return "no space left on the device"
            case .fileWriteVolumeReadOnly: return "read-only file system"
            case .fileWriteFileExists: return "it exists already"
            case .fileReadCorruptFile, .fileReadInapplicableStringEncoding: return "it is not UTF-8 text"
            default: return "file system error \(cocoa.code.rawValue)"
            }
        }
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        return String(describing: error)
    }

    /// "cannot read PATH: why", the why asked of the file system after the read failed: it is missing,
    /// a directory, not readable, or (readable after all) not what was expected.
    static func cannotRead(_ path: String, expected: String = "UTF-8 text") -> String {
        "cannot read \(path): " + Paths.whyUnreadable(path, expected: expected)
    }
}
