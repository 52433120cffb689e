import CloudKitModels

/// Assets in the record detail: `o` saves one to a file; `e` on an asset field (or `a NAME ASSETID`)
/// stages a local file, uploaded when the batch is committed.
extension Browser {
    /// `o`: the selected asset (a field, or an element of an asset list) to a file; asks where.
    static func openAssetDownload(_ screen: DetailScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        let detail = screen.detail
        guard let line = selectedLine(screen, state), let field = line.owner, let value = currentValue(detail, state, field) else {
            state.say(.select(.assetField))
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
            state.say(.notAnAsset(field, value.type))
            return []
        }
        if let path = asset.localFilePath {
            state.say(.assetNotUploaded(field, path: path))
            return []
        }
        guard asset.downloadURL != nil else {
            state.say(.assetHasNoURL(field))
            return []
        }
        let name = AssetFileName.offer(detail.recordName + "-" + field + suffix, downloadURL: asset.downloadURL)
        state.input = InputLine(.saveAsset(AssetDownload(asset: asset, path: "", label: label)), text: name)
        return []
    }

    static func saveAsset(_ download: AssetDownload, _ state: inout BrowserState) -> [BrowserEffect] {
        guard !download.path.isEmpty else {
            refuse(.saveNeedsName, &state)
            return []
        }
        state.say(.downloading(download.label, to: download.path))
        return [.downloadAsset(download)]
    }

    /// The file typed for `e` on an asset field: checked first (it must exist and be readable).
    static func stageAssetFile(_ field: String, path: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let path = path.trimmingWhitespace()
        guard let detail = state.detailScreen?.detail, !path.isEmpty else {
            refuse(.uploadNeedsPath, &state)
            return []
        }
        state.say(.checkingPath(path))
        return [.checkAssetFile(detail.key, field: field, path: path)]
    }

    static func assetFileChecked(_ key: RecordKey, field: String, _ result: Result<LocalAssetFile, BrowserFailure>, _ state: inout BrowserState) -> [BrowserEffect] {
        switch result {
        case .failure(let failure):
            state.say(.nothingStaged(.failed(failure)))
        case .success(let file):
            guard let detail = state.detailScreen?.detail, detail.key == key, let record = detail.record else {
                state.say(.nothingStaged(.recordClosed(path: file.path)))
                return []
            }
            stage(StagedOperation(kind: .update, zone: detail.zone, base: record, changes: [field: .asset(.localFile(path: file.path, size: file.size))]), &state,
                  as: .upload(file.path, bytes: file.size, field: field))
        }
        return []
    }

    /// Progress replaces only the download's own message: a report that arrives after the download
    /// ended (they travel separately) must not hide its outcome.
    static func assetProgress(_ label: String, done: Int64, total: Int64?, _ state: inout BrowserState) {
        guard state.messageKind == .progress(.download(label)) else { return }
        state.say(.downloadProgress(label, done: done, total: total))
    }

    static func assetDownloaded(_ label: String, _ result: Result<(path: String, bytes: Int64), BrowserFailure>, _ state: inout BrowserState) {
        switch result {
        case .success(let saved):
            state.say(.assetSaved(label, path: saved.path, bytes: saved.bytes))
        case .failure(let failure):
            var failure = failure
            failure.message = "\(label) was not saved: \(failure.message)"
            fail(&state, failure)
            state.say(.failed(failure))

        }
    }
}
