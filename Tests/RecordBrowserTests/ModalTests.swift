import BrowserRuntime
import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite struct ModalTests {
    /// A sign-in notice raised while the user types on the `:` line waits: the typed text stays, and
    /// the notice opens when the line closes.
    @Test func aNoticeRaisedWhileTypingWaitsItsTurn() {
        var h = Harness()
        h.keys(.char(":"))
        h.type("db pub")
        h.send(.zonesLoaded(.private, .failure(BrowserFailure(message: "AUTHENTICATION_REQUIRED", isAuthenticationRequired: true))))
        #expect(h.state.input?.text == "db pub" && h.state.signInNotice == nil && h.state.queuedModals.count == 1)
        h.keys(.escape)
        #expect(h.state.input == nil && h.state.signInNotice != nil, "the notice opens once the line is closed")
        h.keys(.char("x"))
        #expect(h.state.modal == nil && h.state.connection.database == .public)
    }

    /// Zones scrolled down and back up keep the scroll the keys set: the renderer draws what the keys kept.
    @Test func aLongZoneListScrollsAsTheKeysSay() {
        var h = Harness(width: 80, height: 24)
        let zones: [ZoneResult] = (0..<60).map { .zone(Zone(zoneID: ZoneID(zoneName: "zone-\($0)"))) }
        h.send(.zonesLoaded(.private, .success(zones)))
        for _ in 0..<40 { h.keys(.char("j")) }
        let scrolled = h.state.position(.zones).scroll
        #expect(scrolled > 0 && h.screen.snapshot.contains("zone-40"))
        h.keys(.char("k"))
        #expect(h.state.position(.zones).scroll == scrolled && h.screen.snapshot.contains("zone-\(scrolled)"), "one row up does not jump the list")
    }
}
