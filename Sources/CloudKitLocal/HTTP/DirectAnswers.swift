import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The way an answer made on the event loop (`CachedAnswerHandler`) goes down the connection's own
/// handlers: by a method call on each, in pipeline order (`FinishAnswersBeforeClose`, then
/// `ConnectionGuard`, then `OriginFormServerCodec`), where a write of swift-http-types parts would
/// be a pipeline event through each of them and a conversion of the head's fields at the codec.
///
/// Each handler does for a direct part what it does for the same part written through the pipeline
/// (counts an answer's end, tracks the writes, slices a large body), then hands it to the next; the
/// codec writes it on to NIO's `HTTPResponseEncoder` as its own output. The answer so still meets the
/// encoder, which frames it and leaves the body out of an answer to a HEAD request, as before.
///
/// Order is kept: every write through these handlers reaches the encoder in the same call, and a
/// direct answer is written only while no earlier answer of the connection is outstanding.
/// For a page from the answer cache that is 15 % fewer instructions in the server (callgrind, 176 k to
/// 150 k a page; PERFORMANCE.md).
protocol DirectAnswerWriter: AnyObject {
    /// Writes one part of an answer towards the socket, as `write` does for the same part.
    func writeDirect(_ part: HTTPServerResponsePart, promise: EventLoopPromise<Void>?)
    /// Flushes what was written, as `flush` does.
    func flushDirect()
}

extension LocalHTTPServer {
    /// An answer's head as NIO writes it, the same as `HTTPResponseHead(HTTPResponse(status:
    /// headerFields: fields(headers)))` with `Content-Length` and `Date` set last: a header whose name
    /// HTTP does not allow is left out, a value is legalized as swift-http-types does, the reason phrase
    /// is the one NIO knows for the status. Skips swift-http-types' fields, which the codec would only
    /// convert back (`DirectAnswersTests` compares the two on valid and invalid headers).
    static func responseHead(status: Int, headers: [(name: String, value: String)], contentLength: Int, date: String) -> HTTPResponseHead {
        var out: [(String, String)] = []
        out.reserveCapacity(headers.count + 2)
        for header in headers {
            let name: HTTPField.Name
            if let common = commonNames[header.name] {
                name = common
            } else {
                guard let parsed = HTTPField.Name(header.name) else { continue }
                // `HTTPFields`' subscript sets these in place: that path keeps their order exactly.
                if parsed == .contentLength || parsed == .date {
                    return slowResponseHead(status: status, headers: headers, contentLength: contentLength, date: date)
                }
                name = parsed
            }
            let value = HTTPField.isValidValue(header.value) ? header.value : HTTPField(name: name, value: header.value).value
            out.append((name.rawName, value))
        }
        out.append(("Content-Length", String(contentLength)))
        out.append(("Date", date))
        return HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status, reasonPhrase: ""), headers: HTTPHeaders(out))
    }

    /// `responseHead` through swift-http-types' types, as the answer was made before.
    static func slowResponseHead(status: Int, headers: [(name: String, value: String)], contentLength: Int, date: String) -> HTTPResponseHead {
        var fields = fields(headers)
        fields[.contentLength] = String(contentLength)
        fields[.date] = date
        return HTTPResponseHead(HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: fields))
    }
}
