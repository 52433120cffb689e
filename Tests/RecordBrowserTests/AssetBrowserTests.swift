import CloudKitModels
import Foundation
import Testing
@testable import RecordBrowser
import TerminalUI

/// Assets in the record detail: `o` asks where and downloads with progress; `e` on an asset field
/// (or `a NAME ASSETID`) stages a checked local file, shown as such and uploaded on commit.
@Suite struct AssetBrowserTests {
    @Test func oAsksWhereThenDownloadsWithProgress() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "title")
        h.keys(.char("o"))
        #expect(h.state.input == nil && h.state.message?.contains("'title' is STRING") == true)
        h.select(field: "image")
        h.keys(.char("o"))
        guard case .saveAsset(let download)? = h.state.input?.mode else { Issue.record("no prompt: \(String(describing: h.state.input))"); return }
        #expect(h.state.input?.text == "artwork-7-image", "a file name is offered")
        #expect(h.screen.beforeCursor == "save 'image' of artwork-7 to (PATH): artwork-7-image", "the cursor stands after the text")
        #expect(download.asset.size == 123_456)
        h.keys(.ctrl("u"))
        h.type("~/wave.png")
        h.keys(.enter)
        guard case .downloadAsset(let sent)? = h.effects.first else { Issue.record("no download: \(h.effects)"); return }
        #expect(sent.path == "~/wave.png" && sent.label == "'image' of artwork-7")
        h.send(.assetProgress(label: sent.label, done: 61_728, total: 123_456))
        #expect(h.state.message == "downloading 'image' of artwork-7: 60 KB of 121 KB (50%)")
        h.send(.assetDownloaded(label: sent.label, .success((path: "/home/u/wave.png", bytes: 123_456))))
        #expect(h.state.message == "saved 'image' of artwork-7 to /home/u/wave.png (121 KB, size checked)")
        h.send(.assetProgress(label: sent.label, done: 100_000, total: 123_456))
        #expect(h.state.message?.hasPrefix("saved") == true, "a late progress report does not hide the outcome")
        h.send(.assetDownloaded(label: sent.label, .failure(BrowserFailure(message: "the network is down"))))
        #expect(h.state.message?.contains("was not saved: the network is down") == true && h.state.lastError != nil)
        // A file that exists is refused before anything is downloaded: the prompt opens again with
        // the name as typed and why.
        var existing = sent
        existing.path = "~/wave.png"
        h.send(.assetSaveRefused(existing, reason: "/home/u/wave.png exists (nothing overwritten): give another name"))
        #expect(h.state.input?.text == "~/wave.png" && h.inputNote == "nothing saved: /home/u/wave.png exists (nothing overwritten): give another name")
        if case .saveAsset(let download)? = h.state.input?.mode { #expect(download.label == sent.label) } else { Issue.record("not the save prompt: \(String(describing: h.state.input))") }
    }

    /// Tab in a file prompt asks the runtime for the paths, completes as far as they agree and shows
    /// the rest; an answer for text since changed is ignored.
    @Test func tabCompletesPathsInFilePrompts() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "image")
        h.keys(.char("e"))
        h.type("~/sc")
        h.keys(.tab)
        #expect(h.effects.contains(.listPaths("~/sc")), "\(h.effects)")
        h.send(.pathsListed(typed: "~/sc", ["~/scans/", "~/score.png", "~/scout.png"]))
        #expect(h.state.input?.text == "~/sc" && h.inputNote == "scans/  score.png  scout.png")
        #expect(h.screen.allText.contains("scans/  score.png  scout.png"))
        h.type("o")
        h.keys(.tab)
        h.send(.pathsListed(typed: "~/sco", ["~/score.png", "~/scout.png"]))
        #expect(h.state.input?.text == "~/sco" && h.inputNote == "score.png  scout.png")
        h.type("r")
        h.send(.pathsListed(typed: "~/sco", ["~/score.png", "~/scout.png"]))
        #expect(h.state.input?.text == "~/scor", "a late answer does not change what was typed since")
        h.keys(.tab)
        h.send(.pathsListed(typed: "~/scor", ["~/score.png"]))
        #expect(h.state.input?.text == "~/score.png" && h.inputNote == nil)
        h.keys(.ctrl("u"))
        h.type("nothing")
        h.keys(.tab)
        h.send(.pathsListed(typed: "nothing", []))
        #expect(h.inputNote == "no file or directory starts so" && h.state.input?.text == "nothing")
    }

    @Test func aFileIsCheckedThenStagedAndShownAsSuch() throws {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "image")
        h.keys(.char("e"))
        h.type("new.png")
        h.keys(.enter)
        guard case .checkAssetFile(let key, let field, let path)? = h.effects.first else { Issue.record("no check: \(h.effects)"); return }
        #expect(field == "image" && path == "new.png" && h.state.staged.isEmpty, "nothing is staged before the file is checked")
        h.send(.assetFileRefused(key, field: field, path: "new.png", reason: "no file /w/new.png"))
        // The prompt opens again with the path as typed and why: it can be fixed, not typed again.
        #expect(h.state.input?.mode == .assetFile(field: "image") && h.state.input?.text == "new.png" && h.state.staged.isEmpty)
        #expect(h.state.input?.refusal == .fileRefused("no file /w/new.png", staging: true) && h.inputNote == "nothing staged: no file /w/new.png")
        h.keys(.escape)
        h.send(.assetFileChecked(key, field: field, .success(LocalAssetFile(path: "/w/new.png", size: 2_048))))
        let staged = try #require(h.state.staged.operations.first?.changes["image"])
        guard case .asset(let asset) = staged else { Issue.record("not an asset: \(staged)"); return }
        #expect(asset.localFilePath == "/w/new.png" && asset.size == 2_048 && asset.fileChecksum == nil)
        #expect(h.screen.snapshot.contains("file /w/new.png · 2.0 KB · uploaded on commit"))
        // o on a file not uploaded yet says so.
        h.select(field: "image")
        h.keys(.char("o"))
        #expect(h.state.input == nil && h.state.message?.contains("staged for upload: nothing to download yet") == true)
        // The commit preview says the file goes first.
        h.keys(.char("c"))
        #expect(Browser.previewText(h.state).contains { $0.contains("'image' of artwork-7: /w/new.png (2.0 KB) is uploaded first") })
    }

    @Test func aNewAssetFieldTakesAFile() {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.keys(.char("a"))
        h.type("scan ASSETID")
        h.keys(.enter)
        #expect(h.state.input?.mode == .assetFile(field: "scan"))
        #expect(h.screen.beforeCursor == "upload a file into 'scan' on commit (PATH): ")
        h.keys(.escape)
        h.keys(.char("a"))
        h.type("year ASSETID")
        h.keys(.enter)
        #expect(h.state.input?.mode == .addField && h.state.input?.text == "year ASSETID" && h.inputNote?.contains("exists as INT64") == true)
    }

    /// Two pages of prefetch lead mean pages arrive in the background while the user works: they
    /// must not take away what the user was just told.
    @Test func aPageArrivingInTheBackgroundKeepsTheMessage() {
        var h = Harness(width: 100, height: 30)
        h.openDetail()
        h.select(field: "year")
        h.keys(.char("x"))
        let told = h.state.message
        #expect(told?.hasPrefix("staged: clear 'year'") == true)
        h.page(Harness.records(0..<5), token: "t2", more: true)
        #expect(h.state.message == told)
    }

    @Test func byteCountsReadAsPeopleSayThem() {
        #expect(AssetProgress.bytes(405) == "405 B" && AssetProgress.bytes(2_048) == "2.0 KB" && AssetProgress.bytes(3_000_000) == "2.9 MB")
        #expect(AssetProgress.describe(done: 0, total: nil) == "0 B")
        #expect(Asset.localFile(path: "/a b/c", size: 1).localFilePath == "/a b/c")
        #expect(Asset(fileChecksum: "x", size: 1, downloadURL: "file:///etc/passwd").localFilePath == nil, "a stored asset is never a local file")
    }
}
