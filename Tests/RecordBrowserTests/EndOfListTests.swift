import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite struct EndOfListTests {
    /// `G` on a freshly opened zone loads to the end and leaves the selection on the last record;
    /// no frame on the way draws a placeholder row.
    @Test func gLoadsToTheEndAndSelectsTheLastRecord() {
        var h = Harness(width: 80, height: 24)
        h.send(.zonesLoaded(.private, .success(Harness.zones)))
        h.keys(.char("j"), .enter)
        h.page(Harness.records(0..<200), token: "t1", more: true)
        h.keys(.char("G"))
        var pages = 1
        func noPlaceholder() -> Bool { !h.screen.snapshot.split(separator: "\n").contains { $0.hasPrefix("   …") } }
        #expect(noPlaceholder())
        while h.state.list?.moreComing == true, pages < 10 {
            let start = pages * 200
            h.page(Harness.records(start..<(start + 200)), token: "t\(pages + 1)", more: pages < 4)
            pages += 1
            #expect(noPlaceholder(), "page \(pages)")
            #expect(h.state.list!.selection == h.state.list!.matching - 1, "the selection follows the end (page \(pages))")
        }
        #expect(h.state.list?.total == 1000 && h.state.list?.moreComing == false)
        #expect(h.state.list?.selection == 999 && h.state.list?.row(999) != nil)
        // g goes back to the top, again without placeholders.
        h.keys(.char("g"))
        #expect(h.state.list?.selection == 0 && noPlaceholder())
    }

    @Test func aSubscriptionShowsItsRawJSON() {
        var h = Harness()
        h.keys(.char("s"))
        h.send(.subscriptionsLoaded(.private, .success(Harness.subscriptions)))
        h.keys(.enter, .char("v"))
        #expect(h.screen.snapshot.contains("RAW JSON as received") && h.screen.snapshot.contains("\"subscriptionID\""))
        h.keys(.char("v"))
        #expect(!h.screen.snapshot.contains("RAW JSON"))
    }
}
