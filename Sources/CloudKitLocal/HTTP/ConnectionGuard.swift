import class CloudKitModels.Lock
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// How long a connection may take over each step, and how many may be open at once
/// (`serve --header-timeout`, `--idle-timeout`, `--write-timeout`, `--max-connections`; SERVER.md).
public struct ConnectionLimits: Sendable, Equatable {
    /// Seconds a client has to send a request's head: from the connection's start for its first
    /// request, from the head's first byte for later ones. Also the longest pause inside a request's
    /// body. A slowloris client (a head trickled byte by byte) is closed after this.
    public var headerTimeout: Double = 10
    /// Seconds a connection may stay open between requests (keep-alive). Longer than the 60 s an HTTP
    /// client's pool commonly keeps a connection, so a client never reuses one the server is closing.
    public var idleTimeout: Double = 75
    /// Seconds an answer may wait for its client to take any of its bytes. A client that stops reading
    /// is closed after this, and the answer it left in the server's memory is freed.
    public var writeTimeout: Double = 30
    /// Connections served at once. Beyond it a connection's request is answered 503 `TRY_AGAIN_LATER`
    /// (`GET /ready` still answers) and the connection is closed.
    public var maximumConnections: Int = 1024
    /// Connections open at once, refused ones included. Beyond it the server stops accepting (they
    /// wait in the listen backlog) until one closes, so connections never use up the descriptors:
    /// NIO retries a failing accept in a loop (100 % of a core) while none is free.
    public var maximumOpen: Int = 1024 + 256

    public init() {}

    /// The descriptors kept free for the store (SQLite's files), the log and `/ready`.
    public static let reservedDescriptors = 64

    /// The limits for a process that may open `fileLimit` descriptors, serving at most `wanted`
    /// connections: all connections stay `reservedDescriptors` below the file limit, and a quarter of
    /// what is left (at least 64) is room for refusals.
    public static func forFileLimit(_ fileLimit: Int, wanted: Int) -> ConnectionLimits {
        var limits = ConnectionLimits()
        let usable = max(2, fileLimit - reservedDescriptors)
        limits.maximumConnections = max(1, min(wanted, usable * 3 / 4))
        limits.maximumOpen = min(usable, limits.maximumConnections + max(64, limits.maximumConnections / 4))
        return limits
    }

    /// A connection over the cap has this long to send its request before it is closed unanswered.
    static let refusalWait = 1.0
}

/// What a connection is doing, and so which limit applies and when it runs out: the guard's rules as a
/// value (times are nanoseconds of a monotonic clock; no I/O), tested in `ConnectionClockTests`.
struct ConnectionClock {
    enum Limit: Equatable { case header, idle, write }

    private let header: UInt64
    private let idle: UInt64
    private let write: UInt64
    /// When the head being received began (the connection's start for its first request).
    private var headSince: UInt64?
    /// A request's head was read and its end not yet.
    private var inBody = false
    private var lastBodyRead: UInt64 = 0
    /// Requests read whose answer's end has not been written.
    private(set) var answering = 0
    /// Writes handed towards the socket and not yet taken by it.
    private var unwritten = 0
    private var lastWriteProgress: UInt64 = 0
    private var idleSince: UInt64

    init(header: Double, idle: Double, write: Double, now: UInt64) {
        func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds) * 1e9) }
        self.header = nanoseconds(header)
        self.idle = nanoseconds(idle)
        self.write = nanoseconds(write)
        headSince = now
        idleSince = now
    }

    /// Bytes arrived: the start of a head, unless a body is being read.
    mutating func bytesRead(now: UInt64) {
        if inBody {
            lastBodyRead = now
        } else if headSince == nil {
            headSince = now
        }
    }

    mutating func headRead(now: UInt64) {
        headSince = nil
        inBody = true
        lastBodyRead = now
        answering += 1
    }

    mutating func bodyRead(now: UInt64) { lastBodyRead = now }

    mutating func endRead() { inBody = false }

    /// A write was handed towards the socket.
    mutating func writeQueued(now: UInt64) {
        if unwritten == 0 { lastWriteProgress = now }
        unwritten += 1
    }

    /// The socket took a write (or it failed).
    mutating func writeDone(now: UInt64) {
        unwritten = max(0, unwritten - 1)
        lastWriteProgress = now
    }

    /// An answer's end was written.
    mutating func answerEnded(now: UInt64) {
        answering = max(0, answering - 1)
        idleSince = now
    }

    /// When the connection must be closed unless something happens first, and which limit that is.
    /// None while a request is being answered and nothing waits for the client (a long-poll holds).
    var deadline: (at: UInt64, limit: Limit)? {
        var earliest: (at: UInt64, limit: Limit)?
        func consider(_ at: UInt64, _ limit: Limit) {
            if earliest == nil || at < earliest!.at { earliest = (at, limit) }
        }
        if unwritten > 0 { consider(lastWriteProgress &+ write, .write) }
        if let headSince { consider(headSince &+ header, .header) }
        if inBody { consider(lastBodyRead &+ header, .header) }
        if answering == 0 && unwritten == 0 && headSince == nil && !inBody {
            consider(max(idleSince, lastWriteProgress) &+ idle, .idle)
        }
        return earliest
    }
}

/// The connections a server serves now, against its cap; shared by every connection's guard.
final class ConnectionCount: @unchecked Sendable {
    private let lock = Lock()
    private var open = 0
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Takes a place if one is free.
    func take() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard open < limit else { return false }
        open += 1
        return true
    }

    func release() {
        lock.lock()
        open -= 1
        lock.unlock()
    }

    var current: Int {
        lock.lock()
        defer { lock.unlock() }
        return open
    }
}

/// Enforces `ConnectionLimits` on one connection: closes it when a head, a pause in a body, an idle
/// keep-alive or a stalled answer outlasts its limit (`ConnectionClock`); answers a connection over the
/// cap with 503 `TRY_AGAIN_LATER` and closes it; and closes a connection whose client went away while
/// its long-poll waits, so the poll's socket is released at once (the responder then cancels the poll).
///
/// Sits first after HTTP decoding, so it sees every request part and every answer (Hummingbird's as
/// pipeline writes, the event loop's by call: `DirectAnswerWriter`), and its closes reach the socket
/// directly (not held by `FinishAnswersBeforeClose`).
/// It adds a `FirstBytes` handler in front of the decoder, which tells it when a head starts arriving.
/// A large body is handed to the socket in slices, so a slow reader's progress is seen.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler, DirectAnswerWriter {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A body larger than this is written in slices of this size (they share its storage).
    static let slice = 128 * 1024

    private let limits: ConnectionLimits
    private let count: ConnectionCount
    /// The server's request policy's refusal of a request, from its head (Host, Origin: the service's
    /// `requestPolicyRefusal`), nil when it may go on. A request it refuses is answered here, before
    /// its body is read (a page elsewhere could otherwise make the server hold 16 MB bodies it would
    /// never run, each as long as the client trickles it); a refusal over the cap answers by it too:
    /// `/ready`'s answer and CORS headers only to a request the full path would answer.
    private let policyRefusal: (HTTPRequest) -> ServerResponse?
    private var clock: ConnectionClock
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    private var timerAt: UInt64?
    /// This connection holds a place under the cap.
    private var counted = false
    private var active = false
    /// Over the cap: the request is answered here with a refusal.
    private var refusing = false
    private var refusedHead: HTTPRequest?
    /// The request being answered is a webcourier long-poll.
    private var longPoll = false
    /// A request was refused from its head: what follows is read and dropped, and the connection
    /// closes once the refusal is written and the request's end was read (closing on unread bytes
    /// would reset the connection, and the client could lose the refusal).
    private var discarding = false
    private var refusalWritten = false
    private var discardedEnd = false
    /// The next handler of a direct answer (the codec).
    private let direct: any DirectAnswerWriter

    init(limits: ConnectionLimits, count: ConnectionCount, direct: any DirectAnswerWriter, policyRefusal: @escaping (HTTPRequest) -> ServerResponse?) {
        self.limits = limits
        self.count = count
        self.direct = direct
        self.policyRefusal = policyRefusal
        clock = ConnectionClock(header: limits.headerTimeout, idle: limits.idleTimeout, write: limits.writeTimeout, now: Self.now())
    }

    static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    /// The connection's write buffer water marks: an answer up to `high` (a page of 200 records is
    /// some 220 KB) is queued without the channel turning unwritable and back, a round of events
    /// through every handler, Hummingbird's async writer included, that cost a sixth of an answer from
    /// the answer cache at NIO's default (64 KB). A slow reader is still bounded: by the write timeout.
    static let writeBuffer = ChannelOptions.Types.WriteBufferWaterMark(low: 512 * 1024, high: 1024 * 1024)

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        try? context.pipeline.syncOperations.addHandler(FirstBytes(owner: self), position: .first)
        try? context.channel.syncOptions?.setOption(ChannelOptions.writeBufferWaterMark, value: Self.writeBuffer)
        if context.channel.isActive { becomeActive(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        becomeInactive()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        becomeActive(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        becomeInactive()
        context.fireChannelInactive()
    }

    private func becomeActive(_ context: ChannelHandlerContext) {
        guard !active else { return }
        active = true
        counted = count.take()
        let header = counted ? limits.headerTimeout : min(limits.headerTimeout, ConnectionLimits.refusalWait)
        refusing = !counted
        clock = ConnectionClock(header: header, idle: limits.idleTimeout, write: limits.writeTimeout, now: Self.now())
        reschedule()
    }

    private func becomeInactive() {
        if counted {
            counted = false
            count.release()
        }
        timer?.cancel()
        timer = nil
        timerAt = nil
    }

    /// Bytes arrived on the socket (from `FirstBytes`).
    fileprivate func bytesArrived() {
        clock.bytesRead(now: Self.now())
        reschedule()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        let now = Self.now()
        switch part {
        case .head(let head):
            // Answered here only when no earlier answer of the connection is outstanding (answers keep
            // their requests' order); else the full path refuses it, after its body.
            let earlierAnswerOutstanding = clock.answering > 0
            clock.headRead(now: now)
            longPoll = head.path?.hasPrefix("/webcourier/") == true
            if refusing {
                refusedHead = head
            } else if !discarding, !earlierAnswerOutstanding, let refusal = policyRefusal(head) {
                discarding = true
                answerRefusal(refusal, context: context)
            }
        case .body: clock.bodyRead(now: now)
        case .end:
            clock.endRead()
            if refusing, let head = refusedHead {
                refusedHead = nil
                refuse(head, context: context)
            }
            if discarding {
                discardedEnd = true
                closeAfterRefusal(context)
            }
        }
        reschedule()
        if !refusing && !discarding { context.fireChannelRead(data) }
    }

    /// After a refusal from the head, the rest of the request is dropped: a decoding error (the client
    /// half-closed mid-body) closes the connection instead of reaching the responder, which never saw
    /// the request and would answer it a second time (a 400).
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if discarding {
            context.close(mode: .all, promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if discarding, case ChannelEvent.inputClosed = event {
            context.close(mode: .all, promise: nil)
            return
        }
        // The client closed its side while its long-poll waits: nobody will read the answer. Closing
        // frees the socket now, and the responder cancels the poll (it watches the channel's close).
        if case ChannelEvent.inputClosed = event, longPoll, clock.answering > 0 {
            context.close(mode: .all, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .body(let body):
            passBody(body, on: context.eventLoop, promise: promise, whole: { context.write(data, promise: $0) }) {
                context.write(self.wrapOutboundOut(.body($0)), promise: $1)
            }
        case .end: passEnd(on: context.eventLoop, promise) { context.write(data, promise: $0) }
        case .head: passOther(on: context.eventLoop, promise) { context.write(data, promise: $0) }
        }
    }

    // A direct answer's parts (`DirectAnswerWriter`): the same as `write`'s, then on to the codec.
    func writeDirect(_ part: HTTPServerResponsePart, promise: EventLoopPromise<Void>?) {
        let next = direct
        guard let loop = context?.eventLoop else { promise?.fail(ChannelError.ioOnClosedChannel); return }
        switch part {
        case .body(.byteBuffer(let body)):
            passBody(body, on: loop, promise: promise, whole: { next.writeDirect(part, promise: $0) }) {
                next.writeDirect(.body(.byteBuffer($0)), promise: $1)
            }
        case .end: passEnd(on: loop, promise) { next.writeDirect(part, promise: $0) }
        case .head, .body(.fileRegion): passOther(on: loop, promise) { next.writeDirect(part, promise: $0) }
        }
    }

    func flushDirect() { direct.flushDirect() }

    /// A body: larger than `slice`, in slices, each completing when the socket took it, so a slow
    /// reader's progress shows; `promise` completes with the last.
    private func passBody(
        _ body: ByteBuffer, on loop: any EventLoop, promise: EventLoopPromise<Void>?, whole: (EventLoopPromise<Void>) -> Void,
        slice forward: (ByteBuffer, EventLoopPromise<Void>) -> Void
    ) {
        guard body.readableBytes > Self.slice else { return passOther(on: loop, promise, whole) }
        var rest = body
        var slices: [EventLoopFuture<Void>] = []
        while rest.readableBytes > 0, let slice = rest.readSlice(length: min(Self.slice, rest.readableBytes)) {
            let written = loop.makePromise(of: Void.self)
            track(written)
            forward(slice, written)
            slices.append(written.futureResult)
        }
        if let promise {
            EventLoopFuture.andAllSucceed(slices, on: loop).cascade(to: promise)
        }
    }

    /// An answer's end.
    private func passEnd(on loop: any EventLoop, _ promise: EventLoopPromise<Void>?, _ forward: (EventLoopPromise<Void>) -> Void) {
        clock.answerEnded(now: Self.now())
        if clock.answering == 0 { longPoll = false }
        passOther(on: loop, promise, forward)
    }

    private func passOther(on loop: any EventLoop, _ promise: EventLoopPromise<Void>?, _ forward: (EventLoopPromise<Void>) -> Void) {
        let written = promise ?? loop.makePromise()
        track(written)
        forward(written)
    }

    private func track(_ written: EventLoopPromise<Void>) {
        clock.writeQueued(now: Self.now())
        reschedule()
        written.futureResult.assumeIsolated().whenComplete { _ in
            self.clock.writeDone(now: Self.now())
            self.reschedule()
        }
    }

    /// Over the cap: a 503 with CloudKit's error dictionary (or `/ready`'s answer), then close. `/ready`
    /// is answered as on the full path: to GET and HEAD, from no web page and for this server's Host;
    /// anything else it gets is the 503. The `Origin` is echoed only where the policy allows it.
    private func refuse(_ head: HTTPRequest, context: ChannelHandlerContext) {
        let status: HTTPResponse.Status
        let body: String
        var fields = HTTPFields()
        let allowed = policyRefusal(head) == nil
        if allowed, LocalCloudKit.isReadinessMethod(head.method.rawValue), head.path.map({ $0 == "/ready" || $0.hasPrefix("/ready?") }) == true {
            status = .ok
            body = #"{"ready":true}"#
        } else {
            status = .serviceUnavailable
            let reason = "the server has \(count.limit) connections open, its limit (serve --max-connections); try again later"
            body = #"{"serverErrorCode":"TRY_AGAIN_LATER","reason":"\#(reason)","retryAfter":1}"#
            fields[.retryAfter] = "1"
        }
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.utf8.count)
        fields[.connection] = "close"
        if allowed, let origin = head.headerFields[.origin] {
            fields[.accessControlAllowOrigin] = origin
            fields[.accessControlExposeHeaders] = "Retry-After"
        }
        writeWholeAnswer(HTTPResponse(status: status, headerFields: fields), body: ByteBuffer(string: body), context: context) {
            context.close(mode: .all, promise: nil)
        }
    }

    /// An answer this handler makes itself (a refusal), written whole towards the socket; `written`
    /// runs once the socket took its end.
    private func writeWholeAnswer(_ head: HTTPResponse, body: ByteBuffer, context: ChannelHandlerContext, written: @escaping () -> Void) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let end = context.eventLoop.makePromise(of: Void.self)
        track(end)
        clock.answerEnded(now: Self.now())
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: end)
        end.futureResult.assumeIsolated().whenComplete { _ in written() }
    }

    /// A request refused by the policy from its head: its refusal (the full path's words, without
    /// CORS), with `Connection: close`.
    private func answerRefusal(_ refusal: ServerResponse, context: ChannelHandlerContext) {
        var fields = LocalHTTPServer.fields(refusal.headers)
        fields[.contentLength] = String(refusal.body.count)
        fields[.connection] = "close"
        writeWholeAnswer(HTTPResponse(status: HTTPResponse.Status(code: refusal.status), headerFields: fields), body: ByteBuffer(bytes: refusal.body), context: context) {
            self.refusalWritten = true
            self.closeAfterRefusal(context)
        }
    }

    private func closeAfterRefusal(_ context: ChannelHandlerContext) {
        guard refusalWritten, discardedEnd else { return }
        context.close(mode: .all, promise: nil)
    }

    /// Keeps one timer at the clock's deadline. A deadline only moves later while time passes, so the
    /// timer is moved only when it must fire sooner; when it fires late it looks again.
    private func reschedule() {
        guard active, let context, let (at, _) = clock.deadline else { return }
        if let timerAt, timerAt <= at { return }
        timer?.cancel()
        timerAt = at
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: NIODeadline.uptimeNanoseconds(at)) {
            self.timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        timerAt = nil
        guard let context, let (at, _) = clock.deadline else { return }
        if Self.now() >= at {
            context.close(mode: .all, promise: nil)
        } else {
            reschedule()
        }
    }
}

/// Stops accepting while `limit` connections are open, until one closes (on the listening channel).
///
/// Connections are descriptors. When none is left, accept fails with EMFILE, and NIO's listening
/// channel, which still wants to read, retries at once in a loop: 100 % of a core, while nothing can
/// be accepted and `/ready` gets no answer. Below the limit that cannot happen through connections:
/// beyond it they wait in the listen backlog. (Hummingbird's `AvailableConnectionsChannelHandler` does
/// the same; it is not exported by the `Hummingbird` module.)
final class AcceptLimit: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = Channel
    typealias InboundOut = Channel
    typealias OutboundIn = Never

    private let limit: Int
    private var open = 0
    /// A read was held back: one is owed when a connection closes.
    private var holding = false

    init(limit: Int) { self.limit = limit }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        open += 1
        unwrapInboundIn(data).closeFuture.hop(to: context.eventLoop).assumeIsolated().whenComplete { _ in
            self.open -= 1
            if self.holding, self.open < self.limit {
                self.holding = false
                context.read()
            }
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        guard open < limit else {
            holding = true
            return
        }
        context.read()
    }
}

/// Tells a `ConnectionGuard` when bytes arrive, before the HTTP decoder has a complete part.
private final class FirstBytes: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let owner: ConnectionGuard

    init(owner: ConnectionGuard) { self.owner = owner }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        owner.bytesArrived()
        context.fireChannelRead(data)
    }
}
