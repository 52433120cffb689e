import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The real transport: AsyncHTTPClient over HTTPS (or HTTP for a local server), with a per-request
/// timeout and a cap on response size so a hostile server cannot exhaust memory.
public final class AsyncHTTPTransport: HTTPTransport {
    private let client: HTTPClient
    private let ownsClient: Bool
    /// Responses larger than this fail with an `invalidResponse` error.
    public let maximumResponseBytes: Int

    /// Uses the shared AsyncHTTPClient instance.
    public init(maximumResponseBytes: Int = 64 << 20) {
        self.client = HTTPClient.shared
        self.ownsClient = false
        self.maximumResponseBytes = maximumResponseBytes
    }

    public init(client: HTTPClient, maximumResponseBytes: Int = 64 << 20) {
        self.client = client
        self.ownsClient = false
        self.maximumResponseBytes = maximumResponseBytes
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = request.method == .get ? .GET : .POST
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        let timeout = TimeAmount.nanoseconds(Int64(request.timeout * 1_000_000_000))
        let operation = URLParts(request.url).path
        let client = self.client
        let maximumResponseBytes = self.maximumResponseBytes
        let outgoingRequest = outgoing
        do {
            // One deadline for the whole exchange: AsyncHTTPClient's covers the head only, so a server
            // that trickles its body slowly is cut off here.
            return try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
                group.addTask {
                    let response = try await client.execute(outgoingRequest, timeout: timeout)
                    var body = try await response.body.collect(upTo: maximumResponseBytes)
                    let bytes = body.readBytes(length: body.readableBytes) ?? []
                    return HTTPResponse(
                        status: Int(response.status.code),
                        headers: response.headers.map { (name: $0.name, value: $0.value) },
                        body: bytes)
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(max(0, request.timeout) * 1_000_000_000))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                guard let response = first else { throw HTTPClientError.deadlineExceeded }
                return response
            }
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw CloudKitError(
                kind: .invalidResponse, operation: Self.operationName(operation),
                reason: "response larger than \(maximumResponseBytes / (1 << 20)) MB")
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout
            || error == .connectTimeout
        {
            throw CloudKitError(
                kind: .timeout, operation: Self.operationName(operation),
                reason: "no answer within \(CloudKitError.format(seconds: request.timeout))")
        } catch is CancellationError {
            throw CloudKitError(kind: .cancelled, operation: Self.operationName(operation))
        } catch let error as CloudKitError {
            throw error
        } catch {
            // AsyncHTTPClient and NIO errors describe the connection, not the request's URL or headers.
            throw CloudKitError(
                kind: .transport, operation: Self.operationName(operation), reason: Self.describe(error))
        }
    }

    static func operationName(_ path: String) -> String {
        let parts = path.split(separator: "/")
        return parts.suffix(2).joined(separator: "/")
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .remoteConnectionClosed: return "the server closed the connection"
            case .connectTimeout: return "connection timed out"
            default: return "HTTP client error: \(error)"
            }
        }
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        return text
    }
}
