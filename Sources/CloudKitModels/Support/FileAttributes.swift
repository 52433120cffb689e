/// An integer file attribute (`.size`, `.posixPermissions`) from `FileManager.attributesOfItem`,
/// whatever integer type the platform's Foundation stores it as (UInt on Linux's FoundationEssentials,
/// an NSNumber on macOS) and without casting to NSNumber, which is Foundation proper. Package-internal.
package func integerAttribute(_ value: Any?) -> Int? {
    switch value {
    case let v as Int: v
    case let v as UInt: Int(exactly: v)
    case let v as Int64: Int(exactly: v)
    case let v as UInt64: Int(exactly: v)
    case let v as Int32: Int(v)
    case let v as UInt32: Int(v)
    case let v as UInt16: Int(v)
    case let v as Int16: Int(v)
    default: nil
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension FileManager {
    /// What is at `path`: nil when nothing, true for a directory (a link to one included), false for
    /// anything else. One spelling for FoundationEssentials (an `inout Bool`) and Foundation on macOS
    /// (an `ObjCBool` pointer).
    package func isDirectory(atPath path: String) -> Bool? {
        #if canImport(FoundationEssentials)
        var flag = false
        return fileExists(atPath: path, isDirectory: &flag) ? flag : nil
        #else
        var flag: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &flag) ? flag.boolValue : nil
        #endif
    }
}
