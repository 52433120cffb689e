import Foundation
import Testing

@testable import CloudKitLocal

/// The long-poll courier's bookkeeping (`CourierBook`) on its own: no sockets, no sleeps, times
/// given explicitly.
@Suite struct CourierBookTests {
    typealias Book = CourierBook<String>

    @Test func aWaitingPollWakesOnlyForItsOwnToken() {
        var book = Book()
        #expect(book.add(id: book.newID(), token: "a", seen: 0, deadline: 60, handle: "poll-a").isEmpty)
        #expect(book.add(id: book.newID(), token: "b", seen: 0, deadline: 60, handle: "poll-b").isEmpty)
        #expect(book.queued(["b", "nobody"]) == ["poll-b"])
        #expect(book.tokens == ["a"])
        #expect(book.queued(["b"]).isEmpty, "a poll is woken once")
    }

    @Test func aPollThatReadItsQueueBeforeACommitReadsItAgain() {
        var book = Book()
        let seen = book.version
        _ = book.queued([])  // a commit between the poll's read and its wait
        let resumes = book.add(id: book.newID(), token: "a", seen: seen, deadline: 60, handle: "poll-a")
        #expect(resumes.map(\.0) == ["poll-a"] && resumes.map(\.1) == [.woken])
        #expect(book.isEmpty)
    }

    @Test func aNewerPollForTheSameTokenReplacesTheOlder() {
        var book = Book()
        _ = book.add(id: book.newID(), token: "a", seen: 0, deadline: 60, handle: "old")
        let resumes = book.add(id: book.newID(), token: "a", seen: 0, deadline: 60, handle: "new")
        #expect(resumes.map(\.0) == ["old"] && resumes.map(\.1) == [.replaced])
        #expect(book.count == 1)
    }

    @Test func holdTimesRunOutInOrder() {
        var book = Book()
        _ = book.add(id: book.newID(), token: "a", seen: 0, deadline: 5, handle: "a")
        _ = book.add(id: book.newID(), token: "b", seen: 0, deadline: 2, handle: "b")
        #expect(book.nextDeadline == 2)
        #expect(book.expire(now: 1).isEmpty)
        #expect(book.expire(now: 2) == ["b"])
        #expect(book.nextDeadline == 5)
        #expect(book.expire(now: 9) == ["a"])
        #expect(book.nextDeadline == nil && book.isEmpty)
    }

    @Test func aCancelledPollLeavesAndANewerOneStays() {
        var book = Book()
        let old = book.newID()
        _ = book.add(id: old, token: "a", seen: 0, deadline: 60, handle: "old")
        let new = book.newID()
        _ = book.add(id: new, token: "a", seen: 0, deadline: 60, handle: "new")
        #expect(book.remove(id: old) == nil, "already replaced")
        #expect(book.remove(id: new) == "new")
        #expect(book.isEmpty)
    }

    @Test func closingEndsEveryPollAndRefusesNewOnes() {
        var book = Book()
        _ = book.add(id: book.newID(), token: "a", seen: 0, deadline: 60, handle: "a")
        #expect(book.close() == ["a"])
        let resumes = book.add(id: book.newID(), token: "b", seen: book.version, deadline: 60, handle: "b")
        #expect(resumes.map(\.1) == [.replaced])
    }
}

/// The courier with a fake store: one watcher reads the stamp while polls wait, and wakes only the
/// polls whose tokens have payloads.
@Suite struct CourierTests {
    final class FakeStore: @unchecked Sendable {
        let lock = NSLock()
        var stamp: Int64 = 1
        var queued: Set<String> = []
        var stampReads = 0
        func read<T>(_ body: (FakeStore) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(self)
        }
    }

    static func courier(_ store: FakeStore) -> Courier {
        Courier(
            stampInterval: 0.05,
            stamp: { store.read { $0.stampReads += 1; return $0.stamp } },
            pending: { tokens in store.read { $0.queued.intersection(tokens) } })
    }

    @Test func aCommitByAnotherProcessWakesThePollWithAPayloadOnly() async throws {
        let store = FakeStore()
        let courier = Self.courier(store)
        async let a = courier.wait(token: "a", after: courier.version, seconds: 30)
        async let b = courier.wait(token: "b", after: courier.version, seconds: 1)
        while courier.waiting < 2 { try await Task.sleep(nanoseconds: 1_000_000) }
        store.read {
            $0.queued = ["a"]
            $0.stamp += 1
        }
        #expect(await a == .woken)
        #expect(await b == .timeout, "b had nothing queued: it waits out its hold time")
    }

    @Test func theWatcherIdlesWhenNobodyWaits() async throws {
        let store = FakeStore()
        let courier = Self.courier(store)
        #expect(await courier.wait(token: "a", after: courier.version, seconds: 0.1) == .timeout)
        try await Task.sleep(nanoseconds: 100_000_000)
        let reads = store.read { $0.stampReads }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(store.read { $0.stampReads } == reads, "no stamp reads while no poll waits")
    }

    @Test func aCancelledWaitEndsAtOnce() async {
        let courier = Self.courier(FakeStore())
        let task = Task { await courier.wait(token: "a", after: courier.version, seconds: 30) }
        while courier.waiting < 1 { await Task.yield() }
        task.cancel()
        #expect(await task.value == .gone)
        #expect(courier.waiting == 0)
    }
}
