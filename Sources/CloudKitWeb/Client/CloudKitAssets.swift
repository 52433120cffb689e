#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch

/// Assets (reference §3.6, §4.16–4.18): uploads in three steps (an upload URL per field, the bytes
/// POSTed there, the answered asset dictionary saved in the record), rereferencing, and downloads of
/// a fetched asset's `downloadURL`.
extension CloudKitDatabase {
    /// `assets/upload`: one upload URL per field (at most 200), valid 15 minutes.
    public func requestAssetUploads(_ fields: [AssetUploadField], zoneID: ZoneID? = nil) async throws -> [AssetUploadToken] {
        try checkCount(fields.count, .assetsUpload)
        let answer = try await client.perform(.assetsUpload, database: scope, body: AssetUploadRequest(zoneID: zoneID, tokens: fields).json)
        guard case .array(let tokens)? = answer.json["tokens"] else {
            throw CloudKitError(kind: .invalidResponse, operation: Endpoint.assetsUpload.operation, reason: "the answer has no tokens array")
        }
        return try tokens.map { try client.decode(AssetUploadToken.self, $0, .assetsUpload) }
    }

    /// Uploads one file for a record's field: asks for an upload URL, POSTs the bytes, and answers the
    /// record name (the service picks one when `recordName` is nil) and the asset dictionary to save in
    /// that field with records/modify.
    public func uploadAsset(
        _ bytes: [UInt8], recordType: String?, recordName: String? = nil, fieldName: String, zoneID: ZoneID? = nil
    ) async throws -> (recordName: String, asset: Asset) {
        let tokens = try await requestAssetUploads([AssetUploadField(recordName: recordName, recordType: recordType, fieldName: fieldName)], zoneID: zoneID)
        guard let token = tokens.first else {
            throw CloudKitError(kind: .invalidResponse, operation: Endpoint.assetsUpload.operation, reason: "no upload URL in the answer")
        }
        return (token.recordName, try await client.uploadAssetBytes(bytes, to: token.url))
    }

    /// `assets/rereference`: asset dictionaries (with fresh receipts) of fields of existing records, to
    /// save on other records without uploading again. Each entry is an asset or why not.
    public func rereferenceAssets(_ fields: [AssetFieldID], zoneID: ZoneID? = nil) async throws -> [AssetRereference] {
        try checkCount(fields.count, .assetsRereference)
        let answer = try await client.perform(.assetsRereference, database: scope, body: AssetRereferenceRequest(zoneID: zoneID, assets: fields).json)
        guard case .array(let entries)? = answer.json["assets"] else {
            throw CloudKitError(kind: .invalidResponse, operation: Endpoint.assetsRereference.operation, reason: "the answer has no assets array")
        }
        return try entries.map { try client.decode(AssetRereference.self, $0, .assetsRereference) }
    }
}

/// One entry of an assets/rereference answer.
public struct AssetRereference: JSONConvertible, Hashable {
    public var recordName: String?
    public var fieldName: String?
    /// The asset to save elsewhere, or nil with `error`.
    public var asset: Asset?
    public var error: ServerErrorInfo?

    public init(json: JSON) throws {
        let object = try json.object()
        recordName = try object.string("recordName")
        fieldName = try object.string("fieldName")
        if object["serverErrorCode"] != nil {
            error = try ServerErrorInfo(object: object)
        } else {
            asset = try Asset(json: json)
        }
    }

    public var json: JSON {
        var object = JSONObject()
        object.set("recordName", recordName)
        object.set("fieldName", fieldName)
        if let asset, case .object(let a) = asset.json { for (k, v) in a.pairs { object.set(k, v) } }
        error?.write(into: &object)
        return .object(object)
    }
}

extension CloudKitClient {
    /// Upload and download URLs carry their own permission: no token is added to them.
    static let assetTimeout: Double = 600

    /// POSTs a file's bytes to an upload URL from `assets/upload`; answers the asset dictionary
    /// (`singleFile`) to save in the record.
    public func uploadAssetBytes(_ bytes: [UInt8], to url: String) async throws -> Asset {
        let operation = "asset upload"
        let request = HTTPRequest(
            method: .post, url: url, headers: [(name: "Content-Type", value: "application/octet-stream")], body: bytes,
            timeout: max(configuration.requestTimeout, Self.assetTimeout))
        let started = DispatchTime.now().uptimeNanoseconds
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch var error as CloudKitError {
            error.operation = operation
            throw error
        }
        report(operation, .post, started: started, status: response.status, sent: bytes.count, received: response.body.count)
        guard (200..<300).contains(response.status) else { throw Self.refusal(response, operation: operation, reason: "the upload was refused") }
        let json = try? JSON(parsing: response.body)
        guard let file = json?["singleFile"] else {
            throw CloudKitError(kind: .invalidResponse, operation: operation, reason: "the answer has no singleFile")
        }
        do {
            return try Asset(json: file)
        } catch let error as JSONDecodingError {
            throw CloudKitError(kind: .invalidResponse, operation: operation, reason: error.description)
        }
    }

    /// Downloads a fetched asset's file to `path`: written beside it under a temporary name and moved
    /// into place once complete and of the asset's `size` (a failed download leaves no partial file
    /// and nothing overwritten). `fileName` replaces the URL's `${f}` placeholder. `progress` gets the
    /// bytes so far and the expected total. Answers the number of bytes written.
    @discardableResult
    public func downloadAsset(
        _ asset: Asset, to path: String, fileName: String? = nil, progress: (@Sendable (Int64, Int64?) -> Void)? = nil
    ) async throws -> Int64 {
        let operation = "asset download"
        guard let template = asset.downloadURL, !template.isEmpty else {
            throw CloudKitError(kind: .invalidRequest, operation: operation, reason: "the asset has no downloadURL (fetch the record first)")
        }
        let name = fileName ?? (Paths.lastComponent(path).isEmpty ? "asset" : Paths.lastComponent(path))
        let url = template.replacing("${f}", with: PercentEncoding.encodeQueryValue(name))
        let temporary = path + ".part-\(UInt32.random(in: 0...UInt32.max))"
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let handle = FileOutput(forWritingAtPath: temporary) else {
            throw CloudKitError(kind: .file, operation: operation, reason: "cannot write \(path): " + Paths.whyUnwritable(path))
        }
        let writer = AssetFileWriter(handle: handle, expected: asset.size, progress: progress)
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let response = try await transport.stream(
                HTTPRequest(method: .get, url: url, timeout: max(configuration.requestTimeout, Self.assetTimeout)), body: writer.write)
            try writer.close()
            report(operation, .get, started: started, status: response.status, sent: 0, received: Int(writer.written))
            guard (200..<300).contains(response.status) else { throw Self.refusal(response, operation: operation, reason: "the download was refused") }
            if let size = asset.size, size != writer.written {
                throw CloudKitError(kind: .invalidResponse, operation: operation, reason: "got \(writer.written) bytes, the asset has \(size)")
            }
            if FileManager.default.fileExists(atPath: path) { try? FileManager.default.removeItem(atPath: path) }
            do {
                try FileManager.default.moveItem(atPath: temporary, toPath: path)
            } catch {
                throw CloudKitError(kind: .file, operation: operation, reason: "cannot write \(path): " + Paths.whyUnwritable(path))
            }
            return writer.written
        } catch {
            try? writer.close()
            try? FileManager.default.removeItem(atPath: temporary)
            if var error = error as? CloudKitError {
                if error.operation == nil { error.operation = operation }
                throw error
            }
            throw CloudKitError(kind: .file, operation: operation, reason: "cannot write \(path): " + Paths.whyUnwritable(path))
        }
    }

    /// The error of a refused upload or download: the server's error dictionary when it sent one.
    static func refusal(_ response: HTTPResponse, operation: String, reason: String) -> CloudKitError {
        if case .object(let object)? = try? JSON(parsing: response.body), object["serverErrorCode"] != nil, let info = try? ServerErrorInfo(object: object) {
            return CloudKitError(server: info, operation: operation, httpStatus: response.status)
        }
        return CloudKitError(kind: .server, operation: operation, httpStatus: response.status, reason: reason)
    }

    func report(_ operation: String, _ method: HTTPMethod, started: UInt64, status: Int, sent: Int, received: Int) {
        let duration = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        observer?(RequestRecord(
            method: method, operation: operation, database: nil, status: status, serverErrorCode: nil, duration: duration,
            bytesSent: sent, bytesReceived: received, attempt: 1))
    }
}

/// Appends a download's pieces to a file and counts them (pieces arrive one at a time, in order).
final class AssetFileWriter: @unchecked Sendable {
    let handle: FileOutput
    let expected: Int64?
    let progress: (@Sendable (Int64, Int64?) -> Void)?
    private let lock = Lock()
    private var count: Int64 = 0
    private var closed = false

    init(handle: FileOutput, expected: Int64?, progress: (@Sendable (Int64, Int64?) -> Void)?) {
        self.handle = handle
        self.expected = expected
        self.progress = progress
    }

    var written: Int64 { lock.withLock { count } }

    func write(_ bytes: [UInt8]) throws {
        let total: Int64 = try lock.withLock {
            do {
                try handle.write(contentsOf: bytes)
            } catch {
                throw CloudKitError(kind: .file, operation: "asset download", reason: "writing the file failed (disk full?)")
            }
            count += Int64(bytes.count)
            return count
        }
        progress?(total, expected)
    }

    func close() throws {
        try lock.withLock {
            guard !closed else { return }
            closed = true
            try handle.close()
        }
    }
}
