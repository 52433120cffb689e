import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOPosix
import NIOHTTP1

/// The real transport: AsyncHTTPClient over HTTPS (or HTTP for a local server), with a per-request
/// timeout and a cap on response size so a hostile server cannot exhaust memory.
public final class AsyncHTTPTransport: HTTPTransport {
    private let client: HTTPClient
    private let ownsClient: Bool
    /// Responses larger than this fail with an `invalidResponse` error.
    public let maximumResponseBytes: Int

    /// A connection is given this long (name lookup included) before the request fails.
    public static let connectTimeout: Int64 = 5

    /// One client for the process, like `HTTPClient.shared`, but a server that cannot be reached fails
    /// the request within `connectTimeout` seconds (AsyncHTTPClient's pool would retry connecting
    /// until the request's own deadline, 30 s of silence), nothing is retried behind our back, and
    /// redirects are not followed.
    static let defaultClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(connectTimeout))
        configuration.connectionPool.retryConnectionEstablishment = false
        // CloudKit never redirects (sign-in is a redirectURL in a 421 body); a redirect must not carry
        // the tokens in the query to another host, so it is answered as it came.
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Uses the process's client (see `defaultClient`).
    public init(maximumResponseBytes: Int = 64 << 20) {
        self.client = Self.defaultClient
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
        switch request.method {
        case .get: outgoing.method = .GET
        case .post: outgoing.method = .POST
        case .options: outgoing.method = .OPTIONS
        }
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        let timeout = TimeAmount.nanoseconds(Int64(request.timeout * 1_000_000_000))
        let parts = URLParts(request.url)
        let operation = parts.path
        // Where the request went, for errors (scheme, host and port: never the query with its tokens).
        let server = "\(parts.scheme)://\(parts.host)\(parts.port.map { ":\($0)" } ?? "")"
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
        } catch let error as HTTPClientError where error == .connectTimeout {
            _ = error
            throw CloudKitError(
                kind: .timeout, operation: Self.operationName(operation),
                reason: "could not connect to \(server) within \(Self.connectTimeout) s")
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw CloudKitError(
                kind: .timeout, operation: Self.operationName(operation),
                reason: "no answer within \(CloudKitError.format(seconds: request.timeout))")
        } catch is CancellationError {
            throw CloudKitError(kind: .cancelled, operation: Self.operationName(operation))
        } catch let error as CloudKitError {
            throw error
        } catch {
            // AsyncHTTPClient and NIO errors describe the connection, not the request's URL or headers;
            // the server's address is added, without the query.
            throw CloudKitError(
                kind: .transport, operation: Self.operationName(operation), reason: "\(server): " + Self.describe(error))
        }
    }

    public func stream(_ request: HTTPRequest, body sink: @escaping @Sendable ([UInt8]) throws -> Void) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = request.method == .post ? .POST : .GET
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let parts = URLParts(request.url)
        let server = "\(parts.scheme)://\(parts.host)\(parts.port.map { ":\($0)" } ?? "")"
        let client = self.client
        let outgoingRequest = outgoing
        let timeout = request.timeout
        do {
            return try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
                group.addTask {
                    let response = try await client.execute(outgoingRequest, timeout: .nanoseconds(Int64(timeout * 1_000_000_000)))
                    let headers = response.headers.map { (name: $0.name, value: $0.value) }
                    let status = Int(response.status.code)
                    guard (200..<300).contains(status) else {
                        // An error answer is small: kept whole, as `send` does.
                        var body = try await response.body.collect(upTo: 1 << 20)
                        return HTTPResponse(status: status, headers: headers, body: body.readBytes(length: body.readableBytes) ?? [])
                    }
                    for try await buffer in response.body {
                        try sink(Array(buffer.readableBytesView))
                    }
                    return HTTPResponse(status: status, headers: headers, body: [])
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1_000_000_000))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                guard let response = first else { throw HTTPClientError.deadlineExceeded }
                return response
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw CloudKitError(kind: .timeout, operation: "asset download", reason: "\(server): no complete answer within \(CloudKitError.format(seconds: timeout))")
        } catch is CancellationError {
            throw CloudKitError(kind: .cancelled, operation: "asset download")
        } catch let error as CloudKitError {
            throw error
        } catch {
            throw CloudKitError(kind: .transport, operation: "asset download", reason: "\(server): " + Self.describe(error))
        }
    }

    static func operationName(_ path: String) -> String {
        let parts = path.split(separator: "/")
        return parts.suffix(2).joined(separator: "/")
    }

    /// A connection failure in words, decided on the error's type and errno, never its wording.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .remoteConnectionClosed: return "the server closed the connection"
            case .connectTimeout: return "connection timed out"
            default: return "HTTP client error: \(error)"
            }
        }
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return "the name \(error.host) could not be resolved"
            }
            if let first = error.connectionErrors.first { return describe(first.error) }
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused (is the server running?)"
            case ENETUNREACH, EHOSTUNREACH: return "the network or host is unreachable"
            case ECONNRESET: return "the connection was reset"
            default: return "connection failed (errno \(error.errnoCode))"
            }
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "connection timed out" }
        return String(describing: error)
    }
}
