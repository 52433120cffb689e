import BrowserRuntime
import BrowserRuntimeTesting
import CloudKitLocal
import CloudKitWeb
import Foundation
import RecordBrowser
import Testing
import TerminalUI

/// Bulk edits through the real core, runner, cache, local server and journal: 450 deletions go out as
/// 3 atomic requests once the count is typed; exports are written whole, or not at all.
@Suite struct BulkRoundTripTests {
    let zone = ZoneID(zoneName: "Z")

    func drive(_ state: inout BrowserState, _ runner: EffectRunner, _ events: [BrowserEvent]) async {
        var runtime = BrowserLoop(state: state, runner: runner)
        await runtime.settle(events, host: HeadlessHost())
        state = runtime.state
    }

    @Test func fourHundredFiftyMarkedDeletionsGoOutAsThreeAtomicRequests() async throws {
        let client = try CommitRoundTripTests.client()
        let db = client.database(.private)
        _ = try await db.modifyZones([ZoneOperation(.create, zone)])
        for part in stride(from: 0, to: 500, by: 200) {
            _ = try await db.modifyRecords(ModifyRecordsRequest(
                operations: (part..<min(500, part + 200)).map { .create(Record(recordName: String(format: "r%04d", $0), recordType: "T", fields: ["n": .int64(Int64($0))])) }, zoneID: zone))
        }
        let cache = try RecordCache(directory: tempDirectory("cache"), account: testAccount())
        let journal = try StagingJournal(directory: tempDirectory("journal"), account: testAccount())
        let runner = EffectRunner(client: client, cache: cache, journal: journal)
        var state = BrowserState(connection: ConnectionInfo(account: testAccount(), database: .private))
        state.size = (80, 24)
        await drive(&state, runner, [.key(.char("2"))])
        let index = try #require(state.zones.firstIndex { $0.zone?.zoneID.zoneName == "Z" })
        state.setSelection(.zones, index)
        // Open the zone and load it all (G), then mark 450: the first, then V on the 450th.
        await drive(&state, runner, [.key(.enter), .key(.char("G"))])
        #expect(state.list?.total == 500 && state.list?.moreComing == false)
        await drive(&state, runner, [.key(.char("g")), .key(.char(" "))] + Array(repeating: BrowserEvent.key(.char("j")), count: 448) + [.key(.char("V"))])
        #expect(Browser.marks(state).count == 450, "\(state.message ?? "")")
        await drive(&state, runner, [.key(.char("d"))])
        #expect(state.staged.operations.count == 450 && state.staged.operations.allSatisfy { $0.kind == .delete })
        await drive(&state, runner, [.key(.char("c")), .key(.char("y"))])
        #expect(state.commit?.phase == .preview, "y alone does not send a split batch")
        #expect(state.commit?.plan.requests.map(\.body.operations.count) == [200, 200, 50])
        await drive(&state, runner, "450".map { .key(.char($0)) } + [.key(.enter)])
        #expect(state.commit?.phase == .done && state.staged.isEmpty, "\(state.commit?.outcome ?? [])")
        var left = 0
        for part in stride(from: 0, to: 500, by: 200) {
            left += try await db.lookupRecords((part..<min(500, part + 200)).map { String(format: "r%04d", $0) }, zoneID: zone).filter { $0.record != nil }.count
        }
        #expect(left == 50)
    }

    @Test func anExportIsWrittenWholeAsJSONLinesOrCSVAndRefusedWhereItCannotBe() async throws {
        let cache = try RecordCache(directory: tempDirectory("cache"), account: testAccount())
        let list = ListKey(zone: zoneKey(.private, zone))
        let records: [RecordResult] = (0..<1000).map { i in
            .record(Record(recordName: String(format: "r%04d", i), recordType: "T", recordChangeTag: "t\(i)",
                           fields: ["n": .int64(Int64(i)), "s": .string(i == 3 ? "a, \"quoted\"\nline" : "v\(i)")]))
        }
        _ = try cache.apply(list, records: records, syncToken: "t", continuationMarker: nil, moreComing: false)
        let directory = tempDirectory("export")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let runner = EffectRunner(client: try CommitRoundTripTests.client(), cache: cache)

        // JSON lines of what the filter shows.
        let jsonl = ExportRequest(list: list, names: nil, filter: "v1", sort: nil, path: directory + "/out.jsonl", generation: 0)
        guard case .exported(_, .success(let done))? = await runner.execute(.export(jsonl)).first else {
            Issue.record("not exported")
            return
        }
        let lines = try String(contentsOfFile: directory + "/out.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(done.records == lines.count && lines.count == 111, "v1, v10…19, v100…199")
        #expect(try lines.allSatisfy { line in (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["recordName"] != nil })

        // CSV of marked records: a header, quoting where needed.
        let csv = ExportRequest(list: list, names: ["r0003", "r0007"], filter: nil, sort: nil, path: directory + "/out.csv", generation: 0)
        _ = await runner.execute(.export(csv))
        let text = try String(contentsOfFile: directory + "/out.csv", encoding: .utf8)
        #expect(text == "recordName,recordType,recordChangeTag,n,s\r\nr0003,T,t3,3,\"a, \"\"quoted\"\"\nline\"\r\nr0007,T,t7,7,v7\r\n")

        // Nowhere to write: refused with the reason, nothing left behind.
        let nowhere = ExportRequest(list: list, names: nil, filter: nil, sort: nil, path: directory + "/missing/out.jsonl", generation: 0)
        guard case .exportPathChecked(_, let refused)? = await runner.execute(.checkExportPath(nowhere)).first else {
            Issue.record("not checked")
            return
        }
        #expect(refused?.contains("does not exist") == true)
        try FileManager.default.createDirectory(atPath: directory + "/ro", withIntermediateDirectories: true)
        chmod(directory + "/ro", 0o500)
        defer { chmod(directory + "/ro", 0o700) }
        let readOnly = ExportRequest(list: list, names: nil, filter: nil, sort: nil, path: directory + "/ro/out.jsonl", generation: 0)
        if getuid() != 0 {
            guard case .exported(_, .failure(let failure))? = await runner.execute(.export(readOnly)).first else {
                Issue.record("a read-only directory was written to")
                return
            }
            #expect(failure.message.contains("not writable"))
        }
        // A file that exists is never replaced (as `o` never overwrites): refused when the path is
        // checked, and by the final link if one took the name meanwhile.
        guard case .exportPathChecked(_, let exists)? = await runner.execute(.checkExportPath(csv)).first else {
            Issue.record("not checked")
            return
        }
        #expect(exists?.contains("exists (nothing overwritten)") == true)
        guard case .exported(_, .failure(let clobber))? = await runner.execute(.export(csv)).first else {
            Issue.record("an existing file was replaced")
            return
        }
        #expect(clobber.message.contains("exists (nothing overwritten)"))
        #expect(try String(contentsOfFile: directory + "/out.csv", encoding: .utf8) == text, "the file is as it was")
        // Nothing matches: no file is written (an empty one would read as an export that worked).
        let none = ExportRequest(list: list, names: nil, filter: "no such text", sort: nil, path: directory + "/none.jsonl", generation: 0)
        guard case .exported(_, .failure(let empty))? = await runner.execute(.export(none)).first else {
            Issue.record("an export of nothing was written")
            return
        }
        #expect(empty.message == "no record matches the filter: nothing written")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["out.csv", "out.jsonl", "ro"], "no temporary file left")
    }
}
