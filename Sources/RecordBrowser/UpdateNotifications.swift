import CloudKitModels
import TerminalUI

/// The Notifications pane: a push token long-polled for the whole session.
extension Browser {
    /// `N`: the pane; the first time, the listener starts.
    static func openNotifications(_ state: inout BrowserState) -> [BrowserEffect] {
        state.stack.open(.notifications)
        guard state.notifications.connection == .off else { return [] }
        state.notifications.connection = .registering
        return [.startNotifications]
    }

    static func notificationsStatus(_ connection: NotificationFeed.Connection, at now: Int64, _ state: inout BrowserState) {
        var feed = state.notifications
        let wasDisconnected = feed.isDisconnected
        feed.connection = connection
        switch connection {
        case .disconnected:
            if feed.disconnectedSince == nil { feed.disconnectedSince = now }
        case .connected:
            if wasDisconnected, let since = feed.disconnectedSince {
                feed.lastGap = (since, now)
                state.say(.notificationsReconnected)
            }
            feed.disconnectedSince = nil
        default: break
        }
        state.notifications = feed
    }

    static func notificationReceived(_ notification: PushNotification, dropped: Int, at now: Int64, _ state: inout BrowserState) -> [BrowserEffect] {
        var feed = state.notifications
        // Duplicates (the same nid delivered twice) are shown once.
        if let id = notification.notificationID, !feed.seen.insert(id).inserted { return [] }
        feed.items.append(NotificationFeed.Item(received: now, notification: notification))
        if feed.items.count > NotificationFeed.limit { feed.items.removeFirst(feed.items.count - NotificationFeed.limit) }
        feed.dropped += dropped
        if feed.connection != .connected { feed.connection = .connected }
        // Keep the newest selected while the user is at the top of the list (newest first).
        if state.pane == .notifications, feed.selection > 0 { feed.selection = min(feed.selection + 1, feed.items.count - 1) }
        state.notifications = feed
        var effects: [BrowserEffect] = []
        let sid = notification.subscriptionID ?? "?"
        if dropped > 0 { state.say(.notificationsDropped(dropped)) }
        // A firesOnce subscription is gone once it fired: show that in the subscriptions list.
        if let s = state.subscriptions.compactMap(\.subscription).first(where: { $0.subscriptionID == sid }), s.firesOnce == true {
            if !state.known.firedOnce.contains(where: { $0.subscriptionID == sid }) { state.known.firedOnce.append(s) }
            state.say(.firedOnceDeleted(sid, fromPush: true))
            effects.append(.loadSubscriptions(state.connection.database))
        } else if state.pane != .notifications, !(state.report.notice != nil && state.messageKind == .subscriptionFiredOnce) {
            state.say(.pushed(notification))
        }
        return effects
    }

    /// One line: reason, record, zone, subscription.
    static func summary(_ n: PushNotification) -> String {
        switch n.kind {
        case .query: return "\(n.reason?.word ?? "changed") \(n.recordName ?? "?") in \(n.zoneName ?? "?") (\(n.subscriptionID ?? "?"))"
        case .recordZone: return "zone \(n.zoneName ?? "?") changed (\(n.subscriptionID ?? "?"))"
        case .database: return "\(n.database?.rawValue ?? "a") database changed (\(n.subscriptionID ?? "?"))"
        case .unknown: return "an untyped push"
        }
    }

    /// Newest first.
    static func notificationRows(_ state: BrowserState) -> [NotificationFeed.Item] {
        let filter = filterText(state, .notifications)
        return state.notifications.items.reversed().filter { item in
            let n = item.notification
            return matches("\(summary(n)) \(n.subscriptionID ?? "") \(n.zoneName ?? "") \(n.recordName ?? "")", filter)
        }
    }

    static func notificationsKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        let rows = notificationRows(state)
        var feed = state.notifications
        if moveList(key, &feed.selection, &feed.scroll, count: rows.count, height: notificationsHeight(state)) {
            state.notifications = feed
            return []
        }
        switch key {
        case .char("X"):
            feed.items = []
            feed.selection = 0
            state.notifications = feed
            state.say(.notificationsCleared)
        case .char("R"):
            guard let effects = state.withRecords({ refresh(&$0, &$1) }) else {
                state.say(.openZoneFirst(for: .refreshFromPush))
                return []
            }
            return effects
        case .enter, .char("l"), .right:
            // The push in full, its keys named; o there opens what it names.
            guard rows.indices.contains(feed.selection) else { return [] }
            state.stack.push(.push(PushScreen(rows[feed.selection])))
            return []
        case .char("o"):
            guard rows.indices.contains(feed.selection) else { return [] }
            return openPushTarget(rows[feed.selection].notification, &state)
        case .char("y"):
            guard rows.indices.contains(feed.selection) else { return [] }
            state.say(.copied(.pushPayload))
            return [.copy(Format.copyJSON(rows[feed.selection].notification.payload))]
        default: break
        }
        return []
    }

    /// `o` on a push: the record it names (in its zone and database), or its zone, or the zones.
    static func openPushTarget(_ n: PushNotification, _ state: inout BrowserState) -> [BrowserEffect] {
        do {
            if let scope = n.database, scope != state.connection.database {
                state.say(.pushIn(.otherDatabase(scope)))
                return []
            }
            // A record or zone push whose dbs is not certain is not opened in a guessed database.
            if n.database == nil, let code = n.databaseCode, n.kind == .query || n.kind == .recordZone {
                state.say(.pushIn(.unknownDatabase(code: code)))
                return []
            }
            let owner = n.zoneOwner == "_defaultOwner" ? nil : n.zoneOwner
            let zone = ZoneID(zoneName: n.zoneName ?? ZoneID.defaultZoneName, ownerRecordName: owner)
            switch n.kind {
            case .query:
                guard let name = n.recordName else {
                    state.say(.pushIn(.pruned))
                    return []
                }
                if n.reason == .recordDeleted {
                    state.say(.pushIn(.deletedRecord(name)))

                    return []
                }
                return openRecord(RecordKey(zone: state.connection.zone(zone), recordName: name), &state)
            case .recordZone:
                guard n.zoneName != nil else { return [] }
                return openZone(zone, &state)
            case .database, .unknown:
                state.stack.jumpToZones()
                state.zonesLoading = true
                return [.loadZones(state.connection.database)]
            }
        }
    }
}
