import BrowserRuntime
import BrowserRuntimeTesting
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing
import TerminalUI

/// A file staged into an asset field goes through the real core, runner, client and local server:
/// checked, uploaded at commit, saved with its receipt, and downloaded back byte for byte.
@Suite struct AssetCommitTests {
    let zone = ZoneID(zoneName: "Z")

    @Test func aStagedFileIsUploadedOnCommitAndDownloadsBack() async throws {
        let client = try CommitRoundTripTests.client()
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, zone)])
        _ = try await db.modifyRecords(ModifyRecordsRequest(operations: [.create(Record(recordName: "p", recordType: "Photo", fields: ["title": .string("x")]))], zoneID: zone))
        let base = try #require(try await db.lookupRecords(["p"], zoneID: zone).first?.record)
        let directory = tempDirectory("assets")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/scan.bin"
        let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try bytes.write(to: URL(fileURLWithPath: file))
        let runner = EffectRunner(client: client, cache: nil, journal: try StagingJournal(directory: tempDirectory("journal"), account: testAccount()))
        let key = recordKey(.private, zone, "p")

        // The runner checks the file; a missing one is refused with its path.
        guard case .assetFileRefused(_, _, let typed, let missing) = await runner.execute(.checkAssetFile(key, field: "scan", path: directory + "/nope")).first else {
            Issue.record("a missing file was accepted"); return
        }
        #expect(missing == "no file \(directory)/nope" && typed == directory + "/nope")
        guard case .assetFileChecked(_, _, .success(let checked)) = await runner.execute(.checkAssetFile(key, field: "scan", path: file)).first else {
            Issue.record("the file was refused"); return
        }
        #expect(checked == LocalAssetFile(path: file, size: 70_000))
        // Tab in a file prompt: the runner lists what starts with the typed path, in its typed form.
        try FileManager.default.createDirectory(atPath: directory + "/scans", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: directory + "/.scan-hidden", contents: Data())
        guard case .pathsListed(let typed, let paths) = await runner.execute(.listPaths(directory + "/sca")).first else {
            Issue.record("no listing"); return
        }
        #expect(typed == directory + "/sca" && paths == [directory + "/scan.bin", directory + "/scans/"], "\(paths)")

        // Staged and committed through the app's loop: the upload happens first, then records/modify.
        var state = BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private))
        state.size = (100, 30)
        state.staged.stage(StagedOperation(kind: .update, database: .private, zoneID: zone, base: base, changes: ["scan": .asset(.localFile(path: file, size: 70_000))]))
        var runtime = BrowserLoop(state: state, runner: runner)
        await runtime.settle([.key(.char("c")), .key(.char("y"))], host: HeadlessHost())
        #expect(runtime.state.staged.isEmpty, "\(runtime.state.message ?? "")")
        guard case .asset(let saved)? = try await db.lookupRecords(["p"], zoneID: zone).first?.record?.fields["scan"] else {
            Issue.record("the record has no asset"); return
        }
        #expect(saved.size == 70_000 && saved.localFilePath == nil && saved.downloadURL != nil)

        // Downloaded back through the runner (an existing file is never overwritten).
        let host = HeadlessHost()
        let target = directory + "/back.bin"
        let events = await runner.execute(.downloadAsset(AssetDownload(asset: saved, path: target, label: "'scan'")), host: host)
        guard case .assetDownloaded(_, .success(let result))? = events.first else { Issue.record("\(events)"); return }
        let downloaded = try Data(contentsOf: URL(fileURLWithPath: target))
        #expect(result.bytes == 70_000 && downloaded == bytes)
        let again = await runner.execute(.downloadAsset(AssetDownload(asset: saved, path: target, label: "'scan'")), host: host)
        guard case .assetSaveRefused(_, let refused)? = again.first else { Issue.record("overwrote: \(again)"); return }
        #expect(refused.contains("exists (nothing overwritten)"))

        // A staged file deleted before the commit: nothing is sent, the batch stays.
        try FileManager.default.removeItem(atPath: file)
        var later = BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private))
        later.size = (100, 30)
        let current = try #require(try await db.lookupRecords(["p"], zoneID: zone).first?.record)
        later.staged.stage(StagedOperation(kind: .update, database: .private, zoneID: zone, base: current, changes: ["scan": .asset(.localFile(path: file, size: 70_000)), "title": .string("y")]))
        var second = BrowserLoop(state: later, runner: runner)
        await second.settle([.key(.char("c")), .key(.char("y"))], host: HeadlessHost())
        #expect(!second.state.staged.isEmpty)
        #expect(try await db.lookupRecords(["p"], zoneID: zone).first?.record?.fields["title"] == .string("x"), "nothing was sent")
    }
}
