import CloudKitWeb

/// A handler's answer: a JSON value, or JSON already encoded (change pages are written straight
/// from the stored records, see `StoredRecord.write(into:)`).
enum Reply: Sendable {
    case json(JSON)
    case encoded([UInt8])

    var bytes: [UInt8] {
        switch self {
        case .json(let json): return json.bytes
        case .encoded(let bytes): return bytes
        }
    }
}
