@testable import CloudKitLocal
import Testing

/// Request UUIDs (`X-Apple-Request-UUID`) come from `RequestIDs`, not from a system call each.
@Suite struct RequestIDTests {
    @Test func noTwoDrawsOfAProcessRepeatAndTheyLookRandom() {
        // A seed next to the counter's wrap-around: the counter steps past 2^64 in this run.
        let ids = RequestIDs(seed: UInt64.max &- 50_000 &* 0x9E37_79B9_7F4A_7C15)
        var seen = Set<UInt64>()
        var ones = 0
        for _ in 0..<100_000 {
            let (high, low) = ids.next()
            #expect(seen.insert(high).inserted && seen.insert(low).inserted)
            ones += high.nonzeroBitCount + low.nonzeroBitCount
        }
        // 12.8 M bits: half of them set, give or take far more than chance allows (σ ≈ 1,800).
        #expect(abs(ones - 6_400_000) < 20_000)
        // Another seed draws other values.
        let other = RequestIDs(seed: 42)
        #expect((0..<1_000).allSatisfy { _ in !seen.contains(other.next().0) })
    }

    @Test func requestUUIDsAreVersion4InLowerCaseAndDiffer() {
        let uuids = (0..<1_000).map { _ in LocalCloudKit.requestUUID() }
        #expect(Set(uuids).count == uuids.count)
        for uuid in uuids {
            let parts = uuid.split(separator: "-", omittingEmptySubsequences: false)
            #expect(parts.map(\.count) == [8, 4, 4, 4, 12])
            #expect(uuid.allSatisfy { "0123456789abcdef-".contains($0) })
            // The version (4) and the variant (10xx).
            #expect(parts[2].first == "4" && "89ab".contains(parts[3].first!))
        }
    }
}
