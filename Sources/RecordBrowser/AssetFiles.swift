import CloudKitModels
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Assets as the browser handles them: progress text, and values staged from a local file.
public enum AssetProgress {
    /// A byte count for people: `405 B`, `12.3 KB`, `2.9 MB` (powers of 1024).
    public static func bytes(_ n: Int64) -> String {
        if n < 1024 { return "\(n) B" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(n) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return (value < 10 ? String(cFormat: "%.1f", value) : String(Int(value.rounded()))) + " " + units[unit]
    }

    /// `1.2 MB of 2.9 MB (41%)`, or `1.2 MB` when the total is unknown.
    public static func describe(done: Int64, total: Int64?) -> String {
        guard let total, total > 0 else { return bytes(done) }
        return "\(bytes(done)) of \(bytes(total)) (\(min(100, Int(done * 100 / total)))%)"
    }
}

extension Asset {
    /// A value staged from a local file, uploaded when its batch is committed. It has no checksum or
    /// receipt yet; its `downloadURL` is the file's `file://` URL, so a staging journal keeps it.
    public static func localFile(path: String, size: Int64) -> Asset {
        Asset(size: size, downloadURL: "file://" + path)
    }

    /// The local file of a value staged from one (see `localFile`), nil for a stored asset.
    public var localFilePath: String? {
        guard fileChecksum == nil, receipt == nil, let url = downloadURL, url.hasPrefix("file://") else { return nil }
        return String(url.dropFirst("file://".count))
    }
}

/// The file name `o` offers for an asset: `artwork-0011-image.jpg`. The extension comes from the
/// download URL when it says one: a file name in its last path component (Apple's URLs end in the
/// `${f}` placeholder instead, as `ckbrowse serve`'s do), else a content type in its query
/// (`response-content-type=image/png`). Without either the name has no extension.
public enum AssetFileName {
    public static func offer(_ base: String, downloadURL: String?) -> String {
        var name = String(base.map { c in
            c.unicodeScalars.contains { unsafe($0) } || "/\\:*?\"<>| ".contains(c) ? "_" : c
        })
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        if let ext = downloadURL.flatMap(fileExtension(ofURL:)), !name.lowercased().hasSuffix("." + ext) { name += "." + ext }
        return name
    }

    /// Controls, format characters (bidi overrides, zero widths) and separators other than a space.
    static func unsafe(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return true
        default: return false
        }
    }

    /// A lower-case extension of 1 to 8 ASCII letters and digits, or nil.
    public static func fileExtension(ofURL url: String) -> String? {
        let noFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? url
        let parts = noFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = parts.first.map(String.init) ?? ""
        if let last = path.split(separator: "/").last, let file = percentDecoded(String(last)), !file.contains("${f}"),
           let dot = file.lastIndex(of: "."), let ext = valid(String(file[file.index(after: dot)...])) {
            return ext
        }
        guard parts.count == 2 else { return nil }
        for item in parts[1].split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, let value = percentDecoded(String(pair[1]).replacing("+", with: " ")) else { continue }
            switch pair[0].lowercased() {
            case "response-content-type", "content-type", "contenttype", "rsct":
                let mime = value.split(separator: ";").first.map { $0.trimmingWhitespace().lowercased() } ?? ""
                if let ext = mimeExtensions[mime] { return ext }
            default: continue
            }
        }
        return nil
    }

    static func valid(_ ext: String) -> String? {
        guard (1...8).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return ext.lowercased()
    }

    /// `%XX` escapes decoded; nil when one is malformed or the bytes are not UTF-8 (as Foundation's
    /// `removingPercentEncoding`, which is Foundation proper).
    static func percentDecoded(_ s: String) -> String? {
        var bytes: [UInt8] = []
        var input = s.utf8.makeIterator()
        while let byte = input.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = input.next().flatMap(hexValue), let low = input.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static let mimeExtensions: [String: String] = [
        "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp", "image/heic": "heic",
        "image/heif": "heif", "image/svg+xml": "svg", "image/tiff": "tiff", "image/bmp": "bmp",
        "video/mp4": "mp4", "video/quicktime": "mov", "audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/wav": "wav",
        "application/pdf": "pdf", "application/json": "json", "application/zip": "zip", "text/plain": "txt",
        "text/csv": "csv", "text/html": "html", "text/markdown": "md", "application/xml": "xml", "text/xml": "xml",
    ]
}
