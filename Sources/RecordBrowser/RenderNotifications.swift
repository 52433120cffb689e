import CloudKitModels
import TerminalUI

extension Browser {
    static func connectionLine(_ feed: NotificationFeed, _ state: BrowserState) -> (String, Style) {
        let c = state.connection
        switch feed.connection {
        case .off: return ("not listening", Theme.dim)
        case .registering: return ("creating a push token (tokens/create)…", Theme.dim)
        case .connected:
            // The count first: a narrow screen cuts from the end.
            return ("● listening · \(Format.count(feed.items.count)) received this session · push token for \(c.container) (\(c.environment.rawValue))", Style(foreground: .green, bold: true))
        case .disconnected(let reason, let retryIn):
            return ("○ disconnected: \(reason) — retrying in \(Int(retryIn.rounded(.up))) s", Theme.error)
        }
    }

    static func clock(_ ms: Int64) -> String { String(Format.local(ms).split(separator: " ").dropFirst().first ?? "") }

    /// Plain `af` values on one line.
    static func fieldsText(_ n: PushNotification) -> String {
        var parts: [String] = []
        if n.isPruned { parts.append("(pruned)") }
        for (key, value) in n.recordFields?.pairs ?? [] {
            let text: String
            if case .string(let s) = value { text = s } else { text = value.text }
            parts.append("\(key)=\(text.replacing("\n", with: "⏎"))")
        }
        if let body = n.alertBody { parts.append("“\(body)”") }
        return parts.joined(separator: " ")
    }

    /// The row the notifications' column header is on: under the connection line, and the gap and
    /// dropped lines when there are any.
    static func notificationsHeaderRow(_ state: BrowserState) -> Int {
        2 + (state.notifications.lastGap == nil ? 0 : 1) + (state.notifications.dropped > 0 ? 1 : 0)
    }

    /// The rows the notifications have: under their header, above the hint line.
    static func notificationsHeight(_ state: BrowserState) -> Int {
        max(1, Layout(state).hint - notificationsHeaderRow(state) - 1)
    }

    static func drawNotifications(_ screen: inout CellGrid, _ state: BrowserState) {
        let feed = state.notifications
        let (status, style) = connectionLine(feed, state)
        screen.put(" " + TextWidth.truncate(status, to: Layout(screen).innerWidth), x: 0, y: 1, style: style)
        var y = 2
        if let gap = feed.lastGap {
            screen.put(" " + TextWidth.truncate("⚠ offline \(clock(gap.from))–\(clock(gap.to)): pushes sent then are lost · R refreshes (no endpoint fetches them)", to: Layout(screen).innerWidth),
                       x: 0, y: y, style: Theme.staged)
            y += 1
        }
        if feed.dropped > 0 {
            screen.put(" " + TextWidth.truncate("the server dropped \(Format.plural(feed.dropped, "notification")) from a full queue (oldest first)", to: Layout(screen).innerWidth), x: 0, y: y, style: Theme.staged)
            y += 1
        }
        let rows = notificationRows(state)
        let widths = [8, 20, 8, 7, 12, 18]
        var header = " "
        for (title, w) in zip(["TIME", "SUBSCRIPTION", "REASON", "DB", "ZONE", "RECORD"], widths) { header += TextWidth.fit(title, to: w) + " " }
        screen.put(header + "FIELDS / ALERT", x: 0, y: y, style: Theme.header, maxWidth: screen.width)
        y += 1
        if rows.isEmpty {
            // Pushes that the filter hides are not "no notifications yet".
            let filtered = !feed.items.isEmpty && filterText(state, .notifications) != nil
            drawNote(&screen, filtered ? "no notification matches the filter (Esc clears it)"
                : "no notifications yet: make a change that matches a subscription (s lists them)", y: y)
            return
        }
        let height = notificationsHeight(state)
        var list = ListMovement(count: rows.count, selection: feed.selection, scroll: feed.scroll, pageHeight: height)
        list.settle()
        let scroll = list.scroll
        for i in 0..<height where scroll + i < rows.count {
            let item = rows[scroll + i]
            let n = item.notification
            let reason: String
            switch n.kind {
            case .query: reason = n.reason?.word ?? "?"
            case .recordZone: reason = "zone"
            case .database: reason = "database"
            case .unknown: reason = "?"
            }
            let texts = [clock(item.received), n.subscriptionID ?? "?", reason, n.database?.rawValue ?? "?", n.zoneName ?? "", n.recordName ?? ""]
            var line = " "
            for (text, w) in zip(texts, widths) { line += TextWidth.fit(text, to: w) + " " }
            let row = y + i
            screen.put(line, x: 0, y: row, style: n.reason == .recordDeleted ? Theme.tombstone : .plain)
            let rest = Layout(screen).room(after: TextWidth.width(line))
            screen.put(TextWidth.fit(fieldsText(n), to: rest), x: TextWidth.width(line), y: row, style: n.isPruned ? Theme.staged : Theme.dim, maxWidth: rest)
            if scroll + i == feed.selection { highlight(&screen, y: row) }
        }
    }

    /// The subscription detail's last section: what this subscription produced this session.
    static func subscriptionNotificationLines(_ state: BrowserState, id: String?) -> [String] {
        let mine = state.notifications.items.filter { $0.notification.subscriptionID == id }
        var lines = ["", "NOTIFICATIONS THIS SESSION (\(mine.count))"]
        if state.notifications.connection == .off {
            lines.append("  not listening: N starts the notifications pane (a push token for this container)")
        } else if mine.isEmpty {
            lines.append("  none yet")
        }
        for item in mine.suffix(50).reversed() {
            let fields = fieldsText(item.notification)
            lines.append("  \(clock(item.received))  \(summary(item.notification))" + (fields.isEmpty ? "" : "  " + fields))
        }
        return lines
    }
}
