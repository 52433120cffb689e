import CloudKitModels
import TerminalUI

/// One push, in full (Enter on the Notifications pane): every key of the payload as received, each
/// CloudKit short key named (`ck.qry.rid` record, `ck.qry.fo` reason …), then the payload itself,
/// pretty-printed. `y` copies the payload, `o` opens the record or zone it names.
public struct PushScreen: Sendable {
    public var item: NotificationFeed.Item
    public var scroll = 0

    public init(_ item: NotificationFeed.Item) { self.item = item }
}

extension Browser {
    /// What each key of a push payload is (cloudkit-notifications.md §3).
    static let pushKeyNames: [String: String] = [
        "aps": "Apple's part", "aps.alert": "alert", "aps.alert.title": "alert title", "aps.alert.body": "alert text",
        "aps.alert.loc-key": "alert localization key", "aps.alert.loc-args": "alert localization arguments",
        "aps.alert.action-loc-key": "alert action key", "aps.alert.launch-image": "alert launch image",
        "aps.alert.title-loc-key": "title localization key", "aps.alert.title-loc-args": "title localization arguments",
        "aps.alert.subtitle": "alert subtitle", "aps.badge": "badge", "aps.sound": "sound",
        "aps.content-available": "content-available (wakes the app silently)", "aps.category": "category",
        "aps.mutable-content": "mutable-content",
        "ck": "CloudKit's part", "ck.ce": "container environment (1 development, 2 production: unconfirmed)",
        "ck.cid": "container", "ck.nid": "notification ID", "ck.p": "pruned: cut to fit the size limit",
        "ck.ckbrowse": "ckbrowse serve's mark: dbs numbered 0 public, 1 private, 2 shared (not CloudKit's key)",
        "ck.qry": "a query subscription's push", "ck.qry.rid": "record", "ck.qry.zid": "zone", "ck.qry.zoid": "zone owner",
        "ck.qry.dbs": "database", "ck.qry.fo": "reason", "ck.qry.sid": "subscription", "ck.qry.af": "fields (desiredKeys)",
        "ck.qry.rt": "record type",
        "ck.fet": "a zone subscription's push", "ck.fet.zid": "zone", "ck.fet.zoid": "zone owner", "ck.fet.dbs": "database",
        "ck.fet.sid": "subscription",
        "ck.met": "a database subscription's push", "ck.met.dbs": "database", "ck.met.sid": "subscription",
    ]

    /// The push screen's lines, wrapped to `width`: the named keys, then the payload as received.
    public static func pushLines(_ item: NotificationFeed.Item, width: Int) -> [(text: String, tone: Tone)] {
        let n = item.notification
        var keys: [(path: String, value: String, name: String)] = []
        func meaning(_ path: String) -> String? {
            switch path.split(separator: ".").last {
            case "dbs"?: return n.database.map { "the \($0.rawValue) database" }
            case "fo"?: return n.reason?.word
            default: return nil
            }
        }
        func walk(_ value: JSON, _ path: String) {
            if case .object(let object) = value {
                if path == "ck.qry.af" {
                    // Each field of af on its own line, named as the field.
                    keys.append((path, Format.compactJSON(value), pushKeyNames[path] ?? ""))
                    for (key, field) in object.pairs { keys.append((path + "." + key, Format.compactJSON(field), "field \(key)")) }
                    return
                }
                if !path.isEmpty, object.pairs.isEmpty { keys.append((path, "{}", pushKeyNames[path] ?? "")) }
                for (key, child) in object.pairs { walk(child, path.isEmpty ? key : path + "." + key) }
                return
            }
            let name = pushKeyNames[path] ?? (path.hasPrefix("ck.") ? "not a key CloudKit is known to send" : "")
            let said = meaning(path).map { "\(name): \($0)" } ?? name
            keys.append((path, Format.compactJSON(value), said))
        }
        walk(n.payload, "")
        var lines: [(String, Tone)] = []
        let received = "received \(Format.local(item.received))" + (n.isPruned ? " · pruned by the server (ck.p)" : "")
        lines.append((received, .dim))
        lines.append(("", .plain))
        lines.append(("KEYS, NAMED", .emphasis))
        let pathWidth = min(24, (keys.map { TextWidth.width($0.path) }.max() ?? 0) + 2)
        let valueWidth = min(30, max(8, (keys.map { TextWidth.width($0.value) }.max() ?? 0) + 2))
        let wrapWidth = Layout.wrapWidth(width)
        for key in keys {
            // A cut value keeps a space before the name; continuation lines (the name's: the value is
            // fitted to its column) are indented under the name where 32 columns are left for it (fewer
            // would stretch a description over many lines, and push the keys below off an 80x24
            // screen), else under the value; wrapped to what is left, so no word is lost past the edge.
            let row = TextWidth.fit(key.path, to: pathWidth - 1) + " " + TextWidth.fit(key.value, to: valueWidth - 1) + " " + key.name
            let tone: Tone = key.name.hasPrefix("not a key") ? .note : .plain
            let parts = TextWidth.wrap(row, to: wrapWidth)
            guard let first = parts.first else { continue }
            lines.append((first, tone))
            let rest = parts.dropFirst().joined(separator: " ")
            if !rest.isEmpty {
                let indent = wrapWidth - (pathWidth + valueWidth) >= 32 ? pathWidth + valueWidth : pathWidth
                for part in TextWidth.wrap(rest, to: max(10, wrapWidth - indent)) { lines.append((String(repeating: " ", count: indent) + part, tone)) }
            }
        }
        lines.append(("", .plain))
        lines.append(("THE PAYLOAD AS RECEIVED (y copies it)", .emphasis))
        for line in Format.copyJSON(n.payload).split(separator: "\n", omittingEmptySubsequences: false) {
            for part in TextWidth.wrap(String(line), to: wrapWidth) { lines.append((part, .plain)) }
        }
        return lines
    }

    static func pushKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        guard case .push(let screen) = state.stack.top else { return [] }
        let lines = pushLines(screen.item, width: state.size.width)
        var scroll = screen.scroll
        if scrollView(key, &scroll, count: lines.count, height: listHeight(state)) {
            state.stack.modify(.push) { if case .push(var s) = $0 { s.scroll = scroll; $0 = .push(s) } }
            return []
        }
        switch key {
        case .char("y"):
            state.say(.copied(.pushPayload))
            return [.copy(Format.copyJSON(screen.item.notification.payload))]
        case .char("o"), .enter:
            return openPushTarget(screen.item.notification, &state)
        default:
            return []
        }
    }

    static func drawPush(_ screen: inout CellGrid, _ state: BrowserState) {
        guard case .push(let push) = state.stack.top else { return }
        let layout = Layout(state)
        let lines = pushLines(push.item, width: layout.width)
        let scroll = clampedScroll(push.scroll, count: lines.count, height: layout.bodyHeight)
        screen.put(" " + TextWidth.fit("PUSH \(push.item.notification.notificationID ?? "")", to: layout.innerWidth), x: 0, y: layout.header, style: Theme.header)
        for (i, y) in layout.body.enumerated() where scroll + i < lines.count {
            let (text, tone) = lines[scroll + i]
            screen.put(" " + text, x: 0, y: y, style: style(tone), maxWidth: layout.rowWidth)
        }
    }
}
