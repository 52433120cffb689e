import Foundation
import Testing

@testable import CloudKitLocal

/// The connection guard's clock (`ConnectionClock`) and the cap's arithmetic: no sockets, no sleeps,
/// times given in nanoseconds.
@Suite struct ConnectionClockTests {
    static let second: UInt64 = 1_000_000_000

    static func clock() -> ConnectionClock { ConnectionClock(header: 10, idle: 75, write: 30, now: 0) }

    @Test func aNewConnectionHasTheHeaderTimeoutForItsFirstHead() {
        var clock = Self.clock()
        #expect(clock.deadline?.limit == .header && clock.deadline?.at == 10 * Self.second)
        // Bytes trickling in do not move the deadline: only a complete head does.
        clock.bytesRead(now: 5 * Self.second)
        #expect(clock.deadline?.at == 10 * Self.second)
        clock.headRead(now: 6 * Self.second)
        clock.endRead()
        #expect(clock.deadline == nil, "a request being answered has no deadline (a long-poll holds)")
    }

    @Test func aKeptAliveConnectionIdlesUntilTheNextHeadStarts() {
        var clock = Self.clock()
        clock.headRead(now: 1 * Self.second)
        clock.endRead()
        clock.writeQueued(now: 2 * Self.second)
        clock.answerEnded(now: 2 * Self.second)
        #expect(clock.deadline?.limit == .write)
        clock.writeDone(now: 3 * Self.second)
        #expect(clock.deadline?.limit == .idle && clock.deadline?.at == 78 * Self.second)
        clock.bytesRead(now: 50 * Self.second)
        #expect(clock.deadline?.limit == .header && clock.deadline?.at == 60 * Self.second)
    }

    @Test func aStalledAnswerRunsOutAfterTheWriteTimeoutFromItsLastProgress() {
        var clock = Self.clock()
        clock.headRead(now: 0)
        clock.endRead()
        for _ in 0..<3 { clock.writeQueued(now: 1 * Self.second) }
        clock.answerEnded(now: 1 * Self.second)
        #expect(clock.deadline?.at == 31 * Self.second)
        clock.writeDone(now: 20 * Self.second)
        #expect(clock.deadline?.limit == .write && clock.deadline?.at == 50 * Self.second)
    }

    @Test func aPauseInsideABodyCountsAgainstTheHeaderTimeout() {
        var clock = Self.clock()
        clock.headRead(now: 1 * Self.second)
        clock.bodyRead(now: 4 * Self.second)
        #expect(clock.deadline?.at == 14 * Self.second)
        clock.bytesRead(now: 9 * Self.second)
        #expect(clock.deadline?.at == 19 * Self.second)
        clock.endRead()
        #expect(clock.deadline == nil)
    }

    @Test func theCapKeepsDescriptorsInReserve() {
        let roomy = ConnectionLimits.forFileLimit(20_000, wanted: 1024)
        #expect(roomy.maximumConnections == 1024 && roomy.maximumOpen == 1280)
        let tight = ConnectionLimits.forFileLimit(256, wanted: 1024)
        #expect(tight.maximumConnections == 144 && tight.maximumOpen == 256 - ConnectionLimits.reservedDescriptors)
    }
}
