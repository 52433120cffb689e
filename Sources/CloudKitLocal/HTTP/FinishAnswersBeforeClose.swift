import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Lets the answers already written on a connection reach the client before the connection closes.
///
/// On a graceful stop (SIGTERM), Hummingbird closes every connection that has no request in
/// progress. A closed NIO channel drops the bytes the socket had not taken yet. So an answer bigger
/// than the socket's buffer (a 4 MB page to a client still reading) was cut short, and the client
/// got a truncated body with no error. That happened to answers from the cache and to answers
/// computed for the request alike (`tests/reliability/shutdown.py`).
///
/// This handler sits between HTTP decoding and Hummingbird's connection state handler. It therefore
/// sees every answer's end (the event loop's answers by call, `DirectAnswerWriter`) and every close
/// that handler asks for. A full close asked for while an
/// answer's bytes are still being written waits until they are written, for at most `longestWait`, so
/// a client that stopped reading cannot hold the server open. While a close waits, new requests on
/// the connection are not read: the connection is closing, and no answer to them could be sent.
final class FinishAnswersBeforeClose: ChannelDuplexHandler, RemovableChannelHandler, DirectAnswerWriter {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    static let longestWait = TimeAmount.seconds(10)

    /// Answers whose end has been written but not yet taken by the socket.
    private var unfinished = 0
    /// The promises of the close that waits, when one does.
    private var waitingClose: [EventLoopPromise<Void>?]?
    private var deadline: Scheduled<Void>?
    /// The next handler of a direct answer (the connection guard).
    private let direct: any DirectAnswerWriter
    private var context: ChannelHandlerContext?

    init(direct: any DirectAnswerWriter) { self.direct = direct }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard waitingClose == nil else { return }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        context.write(data, promise: answerEnds(context, promise))
    }

    // A direct answer's parts (`DirectAnswerWriter`): the same as `write`'s, then on to the guard.
    func writeDirect(_ part: HTTPServerResponsePart, promise: EventLoopPromise<Void>?) {
        guard let context else { promise?.fail(ChannelError.ioOnClosedChannel); return }
        guard case .end = part else { return direct.writeDirect(part, promise: promise) }
        direct.writeDirect(part, promise: answerEnds(context, promise))
    }

    func flushDirect() { direct.flushDirect() }

    /// Counts an answer whose end is being written, until the socket has taken its last byte (or the
    /// write failed): the promise to write the end with.
    private func answerEnds(_ context: ChannelHandlerContext, _ promise: EventLoopPromise<Void>?) -> EventLoopPromise<Void> {
        unfinished += 1
        let written = promise ?? context.eventLoop.makePromise()
        // A channel's writes complete in order, so all of the answer has gone by then.
        written.futureResult.assumeIsolated().whenComplete { _ in
            self.unfinished -= 1
            if self.unfinished == 0 { self.closeIfWaiting(context: context) }
        }
        return written
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, unfinished > 0 else { return context.close(mode: mode, promise: promise) }
        if waitingClose != nil {
            waitingClose!.append(promise)
            return
        }
        waitingClose = [promise]
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: Self.longestWait) {
            self.closeIfWaiting(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        deadline?.cancel()
        deadline = nil
        // The channel closed some other way while a close waited: its promises still get an answer.
        if let promises = waitingClose {
            waitingClose = nil
            for promise in promises { promise?.fail(ChannelError.alreadyClosed) }
        }
    }

    private func closeIfWaiting(context: ChannelHandlerContext) {
        guard let promises = waitingClose else { return }
        waitingClose = nil
        deadline?.cancel()
        deadline = nil
        let closed = context.eventLoop.makePromise(of: Void.self)
        for promise in promises { if let promise { closed.futureResult.cascade(to: promise) } }
        context.close(mode: .all, promise: closed)
    }
}
