import CloudKitModels

/// Assets in the record detail: `o` saves one to a file; `e` on an asset field (or `a NAME ASSETID`)
/// stages a local file, uploaded when the batch is committed.
extension Browser {
    /// `o`: the selected asset (a field, or an element of an asset list) to a file; asks where.
    static func openAssetDownload(_ state: inout BrowserState) -> [BrowserEffect] {
        guard let detail = state.detail, let line = selectedLine(state), let field = line.owner, let value = currentValue(state, field) else {
            state.message = "o saves an asset to a file: select an ASSETID field"
            return []
        }
        let asset: Asset, label: String, suffix: String
        switch value {
        case .asset(let a):
            (asset, label, suffix) = (a, "'\(field)' of \(detail.recordName)", "")
        case .assetList(let list) where !list.isEmpty:
            let i = min(max(0, line.element ?? 0), list.count - 1)
            (asset, label, suffix) = (list[i], "'\(field)'[\(i)] of \(detail.recordName)", "-\(i)")
        default:
            state.message = "o saves an asset to a file: '\(field)' is \(value.type.rawValue)"
            return []
        }
        if let path = asset.localFilePath {
            state.message = "'\(field)' is the local file \(path), staged for upload: nothing to download yet"
            return []
        }
        guard asset.downloadURL != nil else {
            state.message = "'\(field)' has no download URL (the server sent none): r reloads the record"
            return []
        }
        let name = AssetFileName.offer(detail.recordName + "-" + field + suffix, downloadURL: asset.downloadURL)
        state.input = InputLine(.saveAsset(AssetDownload(asset: asset, path: "", label: label)), text: name)
        return []
    }

    static func saveAsset(_ download: AssetDownload, _ state: inout BrowserState) -> [BrowserEffect] {
        guard !download.path.isEmpty else {
            refuse("nothing saved: give a file name", &state)
            return []
        }
        state.show("downloading \(download.label) to \(download.path)…", kind: .progress(.download(download.label)))
        return [.downloadAsset(download)]
    }

    /// The file typed for `e` on an asset field: checked first (it must exist and be readable).
    static func stageAssetFile(_ field: String, path: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let path = path.trimmingWhitespace()
        guard let detail = state.detail, !path.isEmpty else {
            refuse("nothing staged: give the path of a file", &state)
            return []
        }
        state.message = "checking \(path)…"
        return [.checkAssetFile(detail.key, field: field, path: path)]
    }

    static func assetFileChecked(_ key: RecordKey, field: String, _ result: Result<LocalAssetFile, BrowserFailure>, _ state: inout BrowserState) -> [BrowserEffect] {
        switch result {
        case .failure(let failure):
            state.message = "nothing staged: \(failure.message)"
        case .success(let file):
            guard let detail = state.detail, detail.key == key, let record = detail.record else {
                state.message = "nothing staged: the record was closed before \(file.path) was checked"
                return []
            }
            stage(StagedOperation(kind: .update, zone: detail.zone, base: record, changes: [field: .asset(.localFile(path: file.path, size: file.size))]), &state,
                  message: "staged: upload \(file.path) (\(AssetProgress.bytes(file.size))) into '\(field)' on commit")
        }
        return []
    }

    /// Progress replaces only the download's own message: a report that arrives after the download
    /// ended (they travel separately) must not hide its outcome.
    static func assetProgress(_ label: String, done: Int64, total: Int64?, _ state: inout BrowserState) {
        guard state.messageKind == .progress(.download(label)) else { return }
        state.show("downloading \(label): \(AssetProgress.describe(done: done, total: total))", kind: .progress(.download(label)))
    }

    static func assetDownloaded(_ label: String, _ result: Result<(path: String, bytes: Int64), BrowserFailure>, _ state: inout BrowserState) {
        switch result {
        case .success(let saved):
            state.show("saved \(label) to \(saved.path) (\(AssetProgress.bytes(saved.bytes)), size checked)", kind: .outcome)
        case .failure(let failure):
            var failure = failure
            failure.message = "\(label) was not saved: \(failure.message)"
            fail(&state, failure)
            state.message = failure.message
        }
    }
}
