import CloudKitWeb
import Foundation
import Testing

@Suite struct JSONParserTests {
    @Test("valid documents", arguments: [
        ("{}", JSON.object([:])), ("[]", .array([])), ("  [1, -2, 3.5, -0.25e2]  ", JSON.array([1, -2, 3.5, -25.0])),
        (#""a\"b\\c\/d\b\f\n\r\t""#, .string("a\"b\\c/d\u{8}\u{c}\n\r\t")), (#""\u00e9\u6771\ud83d\ude00""#, .string("é東😀")),
        ("true", true), ("false", false), ("null", nil), ("9223372036854775807", .int(.max)),
        ("-9223372036854775808", .int(.min)), ("9223372036854775808", .double(9_223_372_036_854_775_808)),
        (#"{"a":{"b":[{"c":null}]}}"#, ["a": ["b": [["c": nil] as JSON]]] as JSON), ("\"東京 🇯🇵\"", "東京 🇯🇵"), ("1E3", 1000.0),
    ])
    func valid(text: String, expected: JSON) throws {
        #expect(try JSON(parsing: text) == expected)
    }

    @Test("invalid documents are typed errors", arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "[01]", "[1.]", "[.5]", "[1e]", "[-]", "tru", "nul",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"a\u{1}b\"", "[1] 2", "NaN", "[Infinity]",
        "{\"a\" 1}", "[1 2]", "//c\n1", "'a'", "[1e400]",
    ])
    func invalid(text: String) {
        #expect(throws: JSONDecodingError.self) { try JSON(parsing: text) }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: JSONDecodingError.self) { try JSON(parsing: [0x22, 0xFF, 0xFE, 0x22]) }
        #expect(throws: JSONDecodingError.self) { try JSON(parsing: [0x22, 0xC3, 0x22]) }
        #expect(throws: JSONDecodingError.self) { try JSON(parsing: [0x22, 0x5C, 0x6E, 0xC3, 0x22]) }
    }

    @Test func deepNestingIsBoundedNotACrash() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONDecodingError.self) { try JSON(parsing: deep) }
        let ok = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        _ = try JSON(parsing: ok)
    }

    @Test func writerRoundTripsEverything() throws {
        let value: JSON = [
            "s": "quote \" backslash \\ newline \n control \u{1} 東 😀", "i": .int(.min), "d": 0.1, "big": 1e300,
            "arr": [true, false, nil, [:], []], "neg": -0.5,
        ]
        #expect(try JSON(parsing: value.bytes) == value)
        #expect(try JSON(parsing: value.prettyPrinted()) == value)
        #expect(JSON.double(2).text == "2.0")
    }

    /// Seeded mutation fuzzing of every fixture: no crash, every failure is a JSONDecodingError, and
    /// whenever the fast parser and Foundation's JSONDecoder both accept an input they agree on it.
    @Test func fuzzAgainstJSONDecoder() throws {
        let names = try FileManager.default.contentsOfDirectory(
            atPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path)
        let seeds = try names.filter { $0.hasSuffix(".json") }.sorted().map { try fixture(String($0.dropLast(5))) }
        var rng = Xorshift(seed: 0x5EED)
        let interesting: [[UInt8]] = ["\"", "\\", "{", "}", "[", "]", ",", ":", "-", "0", "1e999", "\\u", "\\ud800", "null", "\u{0}", "é", "9999999999999999999999"].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xED, 0xA0, 0x80]]
        var accepted = 0, rejected = 0, bothAccepted = 0, disagreements: [String] = []
        let decoder = JSONDecoder()
        for i in 0..<12_000 {
            var bytes = seeds[i % seeds.count]
            let mutations = 1 + Int(rng.next() % 4)
            for _ in 0..<mutations where !bytes.isEmpty {
                let at = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 5 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(contentsOf: interesting[Int(rng.next() % UInt64(interesting.count))], at: at)
                case 3: bytes = Array(bytes[..<at])  // truncation
                default: bytes.insert(bytes[at], at: at)
                }
            }
            let fast: JSON?
            do {
                fast = try JSON(parsing: bytes)
                accepted += 1
            } catch is JSONDecodingError {
                fast = nil
                rejected += 1
            }
            // Typed decoding of a mutated document must also fail cleanly, never trap.
            if let fast { _ = try? RecordsResponse(json: fast); _ = try? Record(json: fast) }
            let foundation = try? decoder.decode(JSON.self, from: Data(bytes))
            if let fast, let foundation {
                bothAccepted += 1
                if !fast.isEquivalent(to: foundation) { disagreements.append("value differs for input #\(i)") }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
        #expect(accepted > 500 && rejected > 5000, "accepted \(accepted), rejected \(rejected)")
        #expect(bothAccepted > 500)
    }
}

struct Xorshift {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
