import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import RecordBrowser

/// The runner's asset work: checking a file to stage, downloading with progress, and uploading the
/// staged files of a commit before its records are sent.
extension EffectRunner {
    /// The largest file staged for upload: the service's documented maximum (§6: 50 MB; one page says
    /// 15 MB, which the server then answers with its own reason).
    static let maximumAssetFile: Int64 = 50 << 20

    /// `~`, and paths relative to the working directory, made absolute.
    static func absolutePath(_ path: String) -> String {
        var path = path
        if path == "~" || path.hasPrefix("~/") { path = (ProcessInfo.processInfo.environment["HOME"] ?? "") + path.dropFirst() }
        if !path.hasPrefix("/") { path = FileManager.default.currentDirectoryPath + "/" + path }
        return Paths.standardized(path)
    }

    /// Tab in a file prompt: the entries of the typed directory whose names start with the typed
    /// name (hidden ones only when a `.` was typed), in the form typed (`~` kept), directories with a
    /// trailing `/`. At most 200, sorted.
    func listPaths(_ typed: String) -> BrowserEvent {
        let slash = typed.lastIndex(of: "/")
        let folderTyped = slash.map { String(typed[...$0]) } ?? ""
        let partial = slash.map { String(typed[typed.index(after: $0)...]) } ?? typed
        let folder = Self.absolutePath(folderTyped.isEmpty ? "." : folderTyped)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let matches = names.filter { $0.hasPrefix(partial) && (partial.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted().prefix(200)
        return .pathsListed(typed: typed, matches.map { name in
            folderTyped + name + (FileManager.default.isDirectory(atPath: folder + "/" + name) == true ? "/" : "")
        })
    }

    func checkAssetFile(_ key: RecordKey, field: String, path: String) -> BrowserEvent {
        let absolute = Self.absolutePath(path)
        guard let isDirectory = FileManager.default.isDirectory(atPath: absolute) else {
            return .assetFileRefused(key, field: field, path: path, reason: "no file \(absolute)")
        }
        guard !isDirectory else { return .assetFileRefused(key, field: field, path: path, reason: "\(absolute) is a directory") }
        guard FileManager.default.isReadableFile(atPath: absolute),
            let size = integerAttribute((try? FileManager.default.attributesOfItem(atPath: absolute))?[.size]).map(Int64.init)
        else { return .assetFileRefused(key, field: field, path: path, reason: "\(absolute) cannot be read") }
        guard size <= Self.maximumAssetFile else {
            return .assetFileRefused(key, field: field, path: path, reason: "\(absolute) has \(AssetProgress.bytes(size)); an asset holds at most 50 MB")
        }
        return .assetFileChecked(key, field: field, .success(LocalAssetFile(path: absolute, size: size)))
    }

    /// Downloads to a new file (an existing one is never overwritten); progress goes to `host` at most
    /// ten times a second.
    func downloadAsset(_ download: AssetDownload, host: any EffectHost) async -> [BrowserEvent] {
        let path = Self.absolutePath(download.path)
        guard !FileManager.default.fileExists(atPath: path) else {
            return [.assetSaveRefused(download, reason: "\(path) exists (nothing overwritten): give another name")]
        }
        let throttle = ProgressThrottle()
        let label = download.label
        do {
            let bytes = try await client.downloadAsset(download.asset, to: path, fileName: Paths.lastComponent(path)) { done, total in
                // The last report is the outcome's to give.
                guard done != total, throttle.due() else { return }
                Task { await host.deliver(.assetProgress(label: label, done: done, total: total)) }
            }
            return [.assetDownloaded(label: label, .success((path: path, bytes: bytes)))]
        } catch {
            return [.assetDownloaded(label: label, .failure(BrowserFailure(error)))]
        }
    }

    /// The plan with every staged local file uploaded and replaced by the asset the upload answered
    /// (receipt included). Throws, before anything is saved, when a file cannot be read or uploaded.
    func uploadingLocalFiles(_ plan: CommitPlan) async throws -> CommitPlan {
        var plan = plan
        for r in plan.requests.indices {
            let request = plan.requests[r]
            for o in request.body.operations.indices {
                let record = request.body.operations[o].record
                for (field, value) in record.fields {
                    guard case .asset(let asset) = value, let path = asset.localFilePath else { continue }
                    guard let data = FileManager.default.contents(atPath: path) else {
                        throw BrowserFailure(message: "\(path) cannot be read, so nothing was sent (u unstages '\(field)' of \(record.recordName))")
                    }
                    do {
                        let uploaded = try await client.database(request.database).uploadAsset(
                            Array(data), recordType: record.recordType, recordName: record.recordName, fieldName: field, zoneID: request.zone.zoneID)
                        plan.requests[r].body.operations[o].record.fields[field] = .asset(uploaded.asset)
                    } catch {
                        var failure = BrowserFailure(error)
                        failure.message = "uploading \(path) into '\(field)' of \(record.recordName) failed, so nothing was sent: \(failure.message)"
                        throw failure
                    }
                }
            }
        }
        return plan
    }
}

/// Lets progress through at most every 100 ms.
final class ProgressThrottle: @unchecked Sendable {
    private let lock = Lock()
    private var last: UInt64 = 0

    func due() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        return lock.withLock {
            guard now - last >= 100_000_000 else { return false }
            last = now
            return true
        }
    }
}
