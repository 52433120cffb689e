import CloudKitWeb
import Foundation
import Testing
@testable import RecordBrowser
@testable import TerminalUI

@Suite(.serialized) struct NotificationPaneTests {
    static func push(_ nid: String, sid: String = "artwork-changes", fo: Int64 = 2, rid: String = "artwork-7", af: String = #"{"title":"Wave"}"#, pruned: Bool = false) -> PushNotification {
        let text = #"{"aps":{"alert":{"body":"An artwork changed"}},"ck":{"ce":1,"cid":"iCloud.com.example.Gallery","nid":"\#(nid)"\#(pruned ? #","p":true"# : ""),"qry":{"rid":"\#(rid)","zid":"Gallery","zoid":"_defaultOwner","dbs":2,"fo":\#(fo),"sid":"\#(sid)","af":\#(af)}}}"#
        return try! PushNotification(payload: JSON(parsing: text))
    }

    static let t0: Int64 = 1_709_294_400_000

    @Test func thePaneListsPushesNewestFirstAndDeduplicates() throws {
        var h = Harness(width: 100, height: 30)
        h.keys(.char("N"))
        #expect(h.effects.contains(.startNotifications) && h.state.pane == .notifications)
        h.keys(.escape, .char("N"))
        #expect(!h.effects.contains(.startNotifications), "one listener per session")
        h.send(.notificationsStatus(.connected, at: Self.t0))
        h.send(.notificationReceived(Self.push("n1"), dropped: 0, at: Self.t0 + 1000))
        h.send(.notificationReceived(Self.push("n2", fo: 1, rid: "artwork-9"), dropped: 0, at: Self.t0 + 2000))
        h.send(.notificationReceived(Self.push("n2", fo: 1, rid: "artwork-9"), dropped: 0, at: Self.t0 + 2500))
        h.send(.notificationReceived(Self.push("n3", fo: 3, rid: "artwork-3", af: "{}", pruned: true), dropped: 2, at: Self.t0 + 3000))
        #expect(h.state.notifications.items.count == 3, "the same nid is shown once")
        try assertSnapshot(h.screen, "notifications-100x30")
        // A filter that hides every push says so (not "no notifications yet"); Esc brings them back.
        h.keys(.char("/"))
        h.type("zzzz")
        h.keys(.enter)
        #expect(h.screen.allText.contains("no notification matches the filter (Esc clears it)") && !h.screen.allText.contains("no notifications yet"))
        h.keys(.escape)
        #expect(!h.screen.allText.contains("no notification matches"))
        // Newest first: the delete; o says it was deleted.
        h.keys(.char("o"))
        #expect(h.state.message?.contains("was deleted") == true && h.effects.isEmpty)
        h.keys(.char("j"), .char("o"))
        #expect(h.effects.first == .lookupRecord(recordKey(.private, ZoneID(zoneName: "Gallery"), "artwork-9")) && h.state.pane == .recordDetail)
    }

    /// Enter on a push: its payload in full, each CloudKit key named, y copies it, o opens the record.
    @Test func enterShowsThePushInFullWithItsKeysNamed() throws {
        var h = Harness(width: 100, height: 30)
        h.keys(.char("N"))
        h.send(.notificationsStatus(.connected, at: Self.t0))
        h.send(.notificationReceived(Self.push("n1", af: #"{"title":"Wave","year":1831}"#), dropped: 0, at: Self.t0 + 1000))
        h.keys(.enter)
        #expect(h.state.pane == .push)
        try assertSnapshot(h.screen, "push-100x30")
        let text = h.screen.allText
        for named in ["ck.qry.rid", "record", "ck.qry.sid", "subscription", "ck.qry.fo", "reason: updated", "ck.qry.dbs",
                      "database: the private database", "ck.qry.af.title", "field title", "aps.alert.body", "alert text", "ck.ce", "container environment"] {
            #expect(text.contains(named), "\(named) missing")
        }
        h.keys(.char("y"))
        guard case .copy(let copied)? = h.effects.first else { Issue.record("nothing copied: \(h.effects)"); return }
        #expect(try JSON(parsing: copied) == Self.push("n1", af: #"{"title":"Wave","year":1831}"#).payload, "the payload as received")
        // Scrolls as a text view; the end shows the payload as received.
        h.keys(.char("G"))
        #expect(h.screen.allText.contains("\"sid\" : \"artwork-changes\"") || h.screen.allText.contains("\"sid\": \"artwork-changes\""), "\(h.screen.allText)")
        h.keys(.char("o"))
        #expect(h.effects.first == .lookupRecord(recordKey(.private, ZoneID(zoneName: "Gallery"), "artwork-7")) && h.state.pane == .recordDetail)
        h.keys(.escape)
        #expect(h.state.pane == .push, "Esc goes back to the push")
        // An unknown key under ck is said to be unknown, not hidden.
        var odd = Harness(width: 80, height: 24)
        odd.keys(.char("N"))
        let payload = try JSON(parsing: #"{"ck":{"nid":"x1","zz":7,"qry":{"rid":"a","zid":"Gallery","dbs":2,"fo":1,"sid":"s"}}}"#)
        odd.send(.notificationReceived(try PushNotification(payload: payload), dropped: 0, at: Self.t0))
        odd.keys(.enter)
        #expect(odd.screen.allText.contains("ck.zz") && odd.screen.allText.contains("not a key CloudKit is known to send"))
    }

    @Test func disconnectionsShowAndAReconnectSaysWhatIsLost() throws {
        var h = Harness(width: 100, height: 30)
        h.keys(.char("N"))
        h.send(.notificationsStatus(.connected, at: Self.t0))
        h.send(.notificationsStatus(.disconnected(reason: "the long-poll connection failed", retryIn: 4), at: Self.t0 + 1000))
        #expect(h.screen.line(29).contains("pushes: disconnected"))
        #expect(h.screen.line(1).contains("retrying in 4 s"))
        h.send(.notificationsStatus(.connected, at: Self.t0 + 9000))
        #expect(h.state.message?.contains("lost") == true && h.state.notifications.lastGap != nil)
        #expect(h.screen.snapshot.contains("pushes sent then are lost · R refreshes (no endpoint fetches them)"))
        #expect(!h.screen.line(29).contains("disconnected"))
    }

    @Test func aFiresOnceSubscriptionIsReloadedAndTheDetailListsItsPushes() throws {
        var h = Harness(width: 100, height: 30)
        let once = Subscription.query("once", Query(recordType: "Exhibition"), firesOn: [.create], firesOnce: true)
        h.keys(.char("s"))
        h.send(.subscriptionsLoaded(.private, .success([.subscription(once)] + Harness.subscriptions)))
        h.keys(.char("N"), .char("s"))
        h.send(.subscriptionsLoaded(.private, .success([.subscription(once)] + Harness.subscriptions)))
        h.send(.notificationReceived(Self.push("n1", sid: "once", fo: 1, rid: "exh"), dropped: 0, at: Self.t0))
        #expect(h.effects == [.loadSubscriptions(.private)] && h.state.message?.contains("fired once") == true)
        h.send(.notificationReceived(Self.push("n2", sid: "artwork-changes"), dropped: 0, at: Self.t0))
        h.keys(.char("j"), .enter)
        #expect(Browser.subscriptionLines(h.state).contains { $0.contains("NOTIFICATIONS THIS SESSION (1)") })
        #expect(Browser.subscriptionLines(h.state).contains { $0.contains("updated artwork-7 in Gallery") })
    }

    @Test func payloadsParseAsCloudKitJSShowsThem() throws {
        let n = Self.push("x", fo: 1)
        #expect(n.kind == .query && n.reason == .recordCreated && n.database == .private && n.zoneName == "Gallery")
        #expect(n.recordFields?["title"] == .string("Wave") && n.alertBody == "An artwork changed" && !n.isPruned)
        let zone = try PushNotification(payload: JSON(parsing: #"{"ck":{"nid":"z","fet":{"zid":"Z","dbs":3,"sid":"s"}}}"#))
        #expect(zone.kind == .recordZone && zone.database == .shared && zone.recordName == nil)
        let db = try PushNotification(payload: JSON(parsing: #"{"aps":{},"ck":{"nid":"d","met":{"dbs":2,"sid":"s"}}}"#))
        #expect(db.kind == .database)
        let bare = try PushNotification(payload: JSON(parsing: #"{"ck":{"ce":2,"cid":"c","nid":"b"}}"#))
        #expect(bare.kind == .unknown)
        #expect(throws: (any Error).self) { try PushNotification(payload: JSON(parsing: "[1]")) }
    }
}
