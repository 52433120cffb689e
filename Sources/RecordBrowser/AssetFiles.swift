import CloudKitModels

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
        return (value < 10 ? String(format: "%.1f", value) : String(Int(value.rounded()))) + " " + units[unit]
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
