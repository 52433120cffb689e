import class CloudKitModels.Lock
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers repeated reads from `LocalCloudKit`'s answer cache on the connection's event loop, without
/// the hop into Swift concurrency and Hummingbird's responder that every other request takes (that
/// hop, not the answer, dominates a cached page: see PERFORMANCE.md); and, on a miss, reads whose work
/// is bounded (a page of changes, a lookup, zones, a query SQLite pages) computed here too
/// (`LocalCloudKit.answerOnEventLoop`).
///
/// `/ready` is answered here too, and writes when `answersWritesOnEventLoop` is on.
///
/// Sits after HTTP decoding. A `/database/1/` request is held until its end; if the cache answers it,
/// the answer is written here, otherwise the request passes on unchanged. A request is only answered
/// here while no earlier request of the connection is still waiting for its answer, so answers keep
/// the order of requests (HTTP/1.1 pipelining). `Connection: close` and `Expect` requests and large
/// bodies always pass on.
final class CachedAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Bodies above this pass on (records/changes and query bodies are a few hundred bytes).
    static let largestHeldBody = 64 * 1024
    /// The same when writes are answered here too (`answersWritesOnEventLoop`): a records/modify of
    /// 200 small records is some 40 KB.
    static let largestHeldWrite = 1 << 20

    private enum State {
        case idle
        /// Holding a request that the cache may answer.
        case holding(HTTPRequest, ByteBuffer?)
        /// Passing the current request's parts on.
        case passing
    }

    private let service: LocalCloudKit
    private let shared: CachedAnswerShared
    private var state = State.idle
    /// Requests passed on whose answer has not been written yet.
    private var awaitingAnswers = 0
    private let answersWrites: Bool
    private let largestHeld: Int
    /// Where an answer made here is written: the handler before this one (`FinishAnswersBeforeClose`).
    private let direct: any DirectAnswerWriter

    init(service: LocalCloudKit, shared: CachedAnswerShared, direct: any DirectAnswerWriter) {
        self.service = service
        self.shared = shared
        self.direct = direct
        answersWrites = service.configuration.answersWritesOnEventLoop
        largestHeld = answersWrites ? Self.largestHeldWrite : Self.largestHeldBody
    }

    /// Whether a request to this path may be answered here.
    private func holds(_ path: String?) -> Bool {
        guard let path else { return false }
        return path.hasPrefix("/database/1/") || path == "/ready" || path.hasPrefix("/ready?") || (answersWrites && path.hasPrefix(LocalCloudKit.adminPathPrefix))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head(let head), _):
            if awaitingAnswers == 0, holds(head.path),
                head.headerFields[.connection]?.lowercased() != "close", head.headerFields[.expect] == nil
            {
                state = .holding(head, nil)
            } else {
                state = .passing
                context.fireChannelRead(data)
            }
        case (.body(var part), .holding(let head, var body)):
            if (body?.readableBytes ?? 0) + part.readableBytes > largestHeld {
                state = .passing
                context.fireChannelRead(wrapInboundOut(.head(head)))
                if let body { context.fireChannelRead(wrapInboundOut(.body(body))) }
                context.fireChannelRead(data)
            } else if body == nil {
                state = .holding(head, part)
            } else {
                body!.writeBuffer(&part)
                state = .holding(head, body)
            }
        case (.end(let trailers), .holding(let head, let body)):
            state = .idle
            if let answer = cachedAnswer(head, body) {
                // Down this connection's handlers by call (`DirectAnswerWriter`), not as pipeline events.
                direct.writeDirect(.head(answer.head), promise: nil)
                direct.writeDirect(.body(.byteBuffer(answer.body)), promise: nil)
                direct.writeDirect(.end(nil), promise: nil)
                direct.flushDirect()
                return
            }
            awaitingAnswers += 1
            context.fireChannelRead(wrapInboundOut(.head(head)))
            if let body { context.fireChannelRead(wrapInboundOut(.body(body))) }
            context.fireChannelRead(wrapInboundOut(.end(trailers)))
        case (.end, _):
            state = .idle
            awaitingAnswers += 1
            context.fireChannelRead(data)
        case (.body, _):
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), awaitingAnswers > 0 { awaitingAnswers -= 1 }
        context.write(data, promise: promise)
    }

    private func cachedAnswer(_ head: HTTPRequest, _ body: ByteBuffer?) -> (head: HTTPResponseHead, body: ByteBuffer)? {
        guard let target = head.path else { return nil }
        let request = ServerRequest(
            method: head.method.rawValue, target: Substring(target), headers: LocalHTTPServer.headers(head.headerFields, authority: head.authority),
            body: body.map { Array(buffer: $0) } ?? [])
        guard let answer = service.answerOnEventLoop(request) ?? readinessAnswer(request) ?? writeAnswer(request) else { return nil }
        let response = answer.response
        // A cached answer's buffer is shared by the requests it answers; a computed one is copied once
        // (kept among the shared buffers, it would only push out the cached ones).
        let body = answer.isCached ? shared.buffer(for: response.body) : ByteBuffer(bytes: response.body)
        let answerHead = LocalHTTPServer.responseHead(
            status: response.status, headers: response.headers, contentLength: response.body.count, date: shared.date())
        return (answerHead, body)
    }

    private func readinessAnswer(_ request: ServerRequest) -> LocalCloudKit.EventLoopAnswer? {
        service.answerReadinessOnEventLoop(request).map { LocalCloudKit.EventLoopAnswer(response: $0, isCached: false) }
    }

    private func writeAnswer(_ request: ServerRequest) -> LocalCloudKit.EventLoopAnswer? {
        guard answersWrites, let response = service.answerWriteOnEventLoop(request) else { return nil }
        return LocalCloudKit.EventLoopAnswer(response: response, isCached: false)
    }
}

/// What the cached-answer handlers of one server share: the `ByteBuffer`s of the answers sent last, so
/// a hit is not copied into a new buffer each time (a page is ~200 KB), and the `Date` header of the
/// current second. An answer is recognised by its array's storage: the cache hands out the same array
/// until the store changes, and an entry here keeps its array alive, so no other array can have that
/// address meanwhile.
final class CachedAnswerShared: @unchecked Sendable {
    private let lock = Lock()
    private var entries: [(bytes: [UInt8], buffer: ByteBuffer)] = []
    private let capacity = 16

    func buffer(for bytes: [UInt8]) -> ByteBuffer {
        let address = Self.address(bytes)
        lock.lock()
        defer { lock.unlock() }
        if let entry = entries.first(where: { $0.bytes.count == bytes.count && Self.address($0.bytes) == address }) {
            return entry.buffer
        }
        let buffer = ByteBuffer(bytes: bytes)
        entries.append((bytes, buffer))
        if entries.count > capacity { entries.removeFirst() }
        return buffer
    }

    private var dateSecond = 0
    private var dateText = ""

    /// The `Date` header's value (RFC 9110 IMF-fixdate), formatted once a second. Written out by hand:
    /// `strftime` would follow the process's LC_TIME.
    func date() -> String {
        let now = time(nil)
        lock.lock()
        defer { lock.unlock() }
        if Int(now) != dateSecond {
            var parts = tm()
            var seconds = now
            gmtime_r(&seconds, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            dateText = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            dateSecond = Int(now)
        }
        return dateText
    }

    private static func address(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}
