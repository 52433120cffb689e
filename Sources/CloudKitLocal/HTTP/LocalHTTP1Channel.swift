import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 child channel (`HTTP1Channel`), set up the same way, with one difference: the
/// conversion of a request's head to swift-http-types' `HTTPRequest` (`OriginFormServerCodec`) takes the
/// path of an origin-form target (`/…`, every request a client of this server sends) as it is, where
/// swift-nio-extras' codec parses every target with `URLComponents` and then, for one without a scheme,
/// keeps it as it is too. That parse was 5 % of the instructions of an answer from the cache.
/// `setup` follows Hummingbird 2.28.1's `HTTP1Channel.setup` (idle timeout nil, its decoder limits, no
/// pipelining assistance): compare the two on each upgrade of Hummingbird.
struct LocalHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    /// Handlers after the request's conversion, in pipeline order (as `HTTP1Channel`'s additional ones),
    /// given the codec that writes direct answers on to NIO's encoder (`DirectAnswerWriter`).
    let additionalChannelHandlers: @Sendable (_ codec: any DirectAnswerWriter) -> [any RemovableChannelHandler]

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // HTTP1Channel's defaults: 80 KB a header field and a header list, 1,000 fields.
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderFieldSize = 80 * 1024
            limits.maxHeaderListSize = 80 * 1024
            limits.maxHeaderFieldCount = 1000
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: false,  // HTTP is pipelined by NIOAsyncChannel
                withErrorHandling: false,  // Hummingbird's Application handles errors
                withOutboundHeaderValidation: false,  // swift-http-types validates the fields
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: limits
            )
            let codec = OriginFormServerCodec()
            try channel.pipeline.syncOperations.addHandler(codec)
            try channel.pipeline.syncOperations.addHandlers(additionalChannelHandlers(codec))
            try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}

/// swift-nio-extras' `HTTP1ToHTTPServerCodec(secure: false)`, but for the path of an origin-form target;
/// and the last of the handlers a direct answer passes (`DirectAnswerWriter`), already in NIO's types.
final class OriginFormServerCodec: ChannelDuplexHandler, RemovableChannelHandler, DirectAnswerWriter {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func writeDirect(_ part: HTTPServerResponsePart, promise: EventLoopPromise<Void>?) {
        guard let context else { promise?.fail(ChannelError.ioOnClosedChannel); return }
        context.write(wrapOutboundOut(part), promise: promise)
    }

    func flushDirect() { context?.flush() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            do {
                var request = try Self.request(head)
                // swift-http-types has no version, and what follows reads only `Connection: close`
                // (Hummingbird compares the whole value): a request that ends its connection otherwise
                // (HTTP/1.0 without keep-alive, `Connection: keep-alive, close`, `Close`) says so in
                // those words, or its connection stayed open after the answer.
                if !head.isKeepAlive { request.headerFields[.connection] = "close" }
                context.fireChannelRead(wrapInboundOut(.head(request)))
            } catch {
                context.fireErrorCaught(error)
            }
        case .body(let body):
            context.fireChannelRead(wrapInboundOut(.body(body)))
        case .end(let trailers):
            context.fireChannelRead(wrapInboundOut(.end(trailers.map { HTTPFields($0, splitCookie: false) })))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            context.write(wrapOutboundOut(.head(HTTPResponseHead(response))), promise: promise)
        case .body(let body):
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        case .end(let trailers):
            context.write(wrapOutboundOut(.end(trailers.map(HTTPHeaders.init))), promise: promise)
        }
    }

    /// The request as `HTTPRequest(head, secure: false, splitCookie: false)` makes it: a target that
    /// starts with `/` has no scheme, and that initializer then keeps it as the path unchanged.
    static func request(_ head: HTTPRequestHead) throws -> HTTPRequest {
        guard head.uri.utf8.first == UInt8(ascii: "/") else { return try HTTPRequest(head, secure: false, splitCookie: false) }
        return HTTPRequest(
            method: try HTTPRequest.Method(head.method), scheme: "http", authority: head.headers["Host"].first, path: head.uri,
            headerFields: HTTPFields(head.headers, splitCookie: false))
    }
}
