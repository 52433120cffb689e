import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Opaque tokens handed to clients: zone sync tokens, database sync tokens and query continuation
/// markers. Each names what it belongs to, so a token from another zone, an older incarnation of a
/// zone, or another query is refused instead of silently misread.
enum OpaqueToken {
    static func encode(_ parts: [String]) -> String {
        Base64URL.encode(Array(parts.joined(separator: "\u{1F}").utf8))
    }

    static func decode(_ token: String) -> [String]? {
        guard let bytes = Base64URL.decode(token), let text = String(bytes: bytes, encoding: .utf8) else { return nil }
        return text.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
    }

    static func zoneToken(zone: String, incarnation: Int64, seq: Int64) -> String {
        encode(["z1", zone, String(incarnation), String(seq)])
    }

    /// The position in the zone's history, or nil when the token is not one of this zone's.
    static func zoneSeq(_ token: String, zone: String, incarnation: Int64) -> Int64? {
        guard let parts = decode(token), parts.count == 4, parts[0] == "z1", parts[1] == zone,
            parts[2] == String(incarnation), let seq = Int64(parts[3]), seq >= 0
        else { return nil }
        return seq
    }

    static func databaseToken(seq: Int64) -> String { encode(["d1", String(seq)]) }

    static func databaseSeq(_ token: String) -> Int64? {
        guard let parts = decode(token), parts.count == 2, parts[0] == "d1", let seq = Int64(parts[1]), seq >= 0 else {
            return nil
        }
        return seq
    }

    /// A query's continuation marker: its query (`queryHash`) and where the page ended (keyset
    /// paging, `QueryPosition`). Text is base64url inside the marker, so no byte of it can split it;
    /// numbers are their IEEE bits, so they come back exactly.
    static func continuationMarker(after position: QueryPosition, queryHash: String) -> String {
        let keys = position.keys.map { key -> String in
            switch key {
            case nil: return "-"
            case .number(let d)?: return "n" + String(d.bitPattern, radix: 16)
            case .text(let t)?: return "t" + Base64URL.encode(Array(t.utf8))
            }
        }
        return encode(["q2", queryHash, Base64URL.encode(Array(position.zone.utf8)), Base64URL.encode(Array(position.name.utf8))] + keys)
    }

    /// The position a marker names, or nil when it is not one of this query's (another query, a
    /// marker of an earlier version, or one altered).
    static func queryPosition(_ marker: String, queryHash: String, keys count: Int) -> QueryPosition? {
        guard let parts = decode(marker), parts.count == 4 + count, parts[0] == "q2", parts[1] == queryHash,
            let zone = Base64URL.decode(parts[2]).flatMap({ String(bytes: $0, encoding: .utf8) }),
            let name = Base64URL.decode(parts[3]).flatMap({ String(bytes: $0, encoding: .utf8) })
        else { return nil }
        var keys: [FilterPredicate.Scalar?] = []
        for part in parts[4...] {
            if part == "-" {
                keys.append(nil)
            } else if part.hasPrefix("n"), let bits = UInt64(part.dropFirst(), radix: 16) {
                keys.append(.number(Double(bitPattern: bits)))
            } else if part.hasPrefix("t"), let bytes = Base64URL.decode(String(part.dropFirst())), let text = String(bytes: bytes, encoding: .utf8) {
                keys.append(.text(text))
            } else {
                return nil
            }
        }
        return QueryPosition(keys: keys, name: name, zone: zone)
    }

    /// FNV-1a of bytes, hex: ties a continuation marker to its query.
    static func hash(_ bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return String(h, radix: 16)
    }
}

/// Unpadded base64url (RFC 4648 §5), byte by byte: every answer to a signed-in caller carries a
/// minted token, and Foundation's base64 plus three `replacingOccurrences` took a fifth of a
/// cached answer's time.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let n = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Also accepts the standard alphabet and padding (tokens minted before this encoder).
    static func decode(_ text: String) -> [UInt8]? {
        var out = [UInt8]()
        var n: UInt32 = 0
        var count = 0
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "="): continue
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            default:
                value = values[Int(byte)]
                if value == 0xFF { return nil }
            }
            n = n << 6 | UInt32(value)
            count += 1
            if count == 4 {
                out.append(UInt8(n >> 16 & 0xFF))
                out.append(UInt8(n >> 8 & 0xFF))
                out.append(UInt8(n & 0xFF))
                n = 0
                count = 0
            }
        }
        switch count {
        case 0: break
        case 2: out.append(UInt8(n >> 4 & 0xFF))
        case 3:
            out.append(UInt8(n >> 10 & 0xFF))
            out.append(UInt8(n >> 2 & 0xFF))
        default: return nil
        }
        return out
    }
}
