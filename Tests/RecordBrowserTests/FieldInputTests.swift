import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser

@Suite struct FieldInputTests {
    @Test("valid input", arguments: [
        ("hello\nworld", FieldType.string, FieldValue.string("hello\nworld")),
        ("9223372036854775807", .int64, .int64(.max)), ("-42", .int64, .int64(-42)), ("true", .int64, .int64(1)),
        ("3.25", .double, .double(3.25)), ("-1e-3", .double, .double(-0.001)),
        ("2024-03-01T12:00:00Z", .timestamp, .timestamp(1_709_294_400_000)),
        ("2024-03-01T13:00:00.250+01:00", .timestamp, .timestamp(1_709_294_400_250)),
        ("2024-03-01", .timestamp, .timestamp(1_709_251_200_000)), ("1709294400000", .timestamp, .timestamp(1_709_294_400_000)),
        ("AAEC/w==", .bytes, .bytes(Data([0, 1, 2, 255]))), ("0x0001ff", .bytes, .bytes(Data([0, 1, 255]))),
        ("artist-1 DELETE_SELF", .reference, .reference(Reference(recordName: "artist-1", action: .deleteSelf))),
        ("artist-1", .reference, .reference(Reference(recordName: "artist-1", action: .noAction))),
        ("35.36, 138.72 ± 5", .location, .location(Location(latitude: 35.36, longitude: 138.72, horizontalAccuracy: 5))),
        ("[\"a\", \"b\"]", .stringList, .stringList(["a", "b"])), ("1\n2\n3", .int64List, .int64List([1, 2, 3])),
        ("[]", .timestampList, .timestampList([])),
    ])
    func valid(text: String, type: FieldType, expected: FieldValue) {
        #expect(FieldInput.parse(text, as: type) == .success(expected))
    }

    @Test("invalid input gets a clear message", arguments: [
        ("9223372036854775808", FieldType.int64, "outside INT64's range"), ("4.5", .int64, "whole number"),
        ("abc", .double, "finite number"), ("1e999", .double, "finite number"),
        ("2024-13-01T00:00:00Z", .timestamp, "not a valid date"), ("2024-03-01T12:00:00", .timestamp, "time zone"),
        ("2024-03-01T12:00:00.0001Z", .timestamp, "whole milliseconds"), ("yesterday", .timestamp, "ISO-8601"),
        ("0x123", .bytes, "even number"), ("!!", .bytes, "base64"),
        ("a b c", .reference, "recordName"), ("a SOMETIMES", .reference, "unknown reference action"),
        ("91, 0", .location, "within ±90"), ("north", .location, "latitude, longitude"),
        ("1\nx", .int64List, "element 1"), ("[1,", .stringList, "JSON array"), ("x", .assetID, "uploaded"),
    ])
    func invalid(text: String, type: FieldType, message: String) {
        guard case .failure(let error) = FieldInput.parse(text, as: type) else {
            Issue.record("\(text) should be refused as \(type)")
            return
        }
        #expect(error.description.contains(message), "\(error.description)")
    }

    @Test func textRoundTripsThroughTheParser() {
        let values: [FieldValue] = [
            .string("a\nb"), .int64(-5), .double(0.1), .timestamp(1_709_294_400_250), .timestamp(-1_000), .bytes(Data([9, 8])),
            .reference(Reference(recordName: "x", action: .validate)), .location(Location(latitude: 1.5, longitude: -2.25, horizontalAccuracy: 3)),
            .stringList(["a", "b"]), .int64List([1, 2]), .timestampList([0, 1_000]),
        ]
        for value in values {
            #expect(FieldInput.parse(FieldInput.text(of: value), as: value.type) == .success(value), "\(value)")
        }
    }
}
