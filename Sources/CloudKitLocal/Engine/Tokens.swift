import CloudKitWeb
import Foundation

/// Opaque tokens handed to clients: zone sync tokens, database sync tokens and query continuation
/// markers. Each names what it belongs to, so a token from another zone, an older incarnation of a
/// zone, or another query is refused instead of silently misread.
enum OpaqueToken {
    static func encode(_ parts: [String]) -> String {
        Data(parts.joined(separator: "\u{1F}").utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ token: String) -> [String]? {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        return text.components(separatedBy: "\u{1F}")
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

    static func continuationMarker(offset: Int, queryHash: String) -> String {
        encode(["q1", String(offset), queryHash])
    }

    static func continuationOffset(_ marker: String, queryHash: String) -> Int? {
        guard let parts = decode(marker), parts.count == 3, parts[0] == "q1", parts[2] == queryHash,
            let offset = Int(parts[1]), offset >= 0
        else { return nil }
        return offset
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
