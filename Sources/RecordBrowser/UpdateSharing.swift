import CloudKitModels
import TerminalUI

/// Changing who a record or zone is shared with: staged like every edit (the preview, the atomic
/// commit and the conflict prompt are the usual ones), as updates of the share record.
extension Browser {
    /// Keys of a share record's view: `i` invites, `p` toggles the selected participant's
    /// permission, `x` removes them, `P` cycles the public permission. Nil: not a share key here.
    static func shareKey(_ key: Key, _ share: Record, _ screen: inout DetailScreen, _ state: inout BrowserState) -> [BrowserEffect]? {
        guard [.char("i"), .char("p"), .char("P"), .char("x")].contains(key) else { return nil }
        let line = selectedLine(screen, state), shown = screen.detail.key
        if key == .char("x"), line?.owner != "participants" { return nil }  // x elsewhere clears a field, as in any record
        guard writable(&state) else { return [] }
        guard isShareOwner(share, state) else {
            state.say(.shareOwnerOnly)
            return []
        }
        var edit = currentShareEdit(share, shown, state)
        switch key {
        case .char("i"):
            state.input = InputLine(.invite)
            return []
        case .char("P"):
            let order: [SharePermission] = [.noPermission, .readOnly, .readWrite]
            let now = edit.publicPermission ?? .noPermission
            edit.publicPermission = order[((order.firstIndex(of: now) ?? 0) + 1) % order.count]
            stageShare(edit, share, shown, &state, as: .publicPermission(edit.publicPermission!))
            settleDetail(&screen, state)
        case .char("p"), .char("x"):
            guard let i = line?.element, edit.participants.indices.contains(i) else {
                state.say(.select(.participant))
                return []
            }
            let who = ShareEdit.who(edit.participants[i])
            if key == .char("x") {
                edit.participants.remove(at: i)
                stageShare(edit, share, shown, &state, as: .participantRemoved(who))
            } else {
                edit.participants[i].permission = edit.participants[i].permission == .readWrite ? .readOnly : .readWrite
                stageShare(edit, share, shown, &state, as: .participantPermission(who, edit.participants[i].permission!))
            }
            settleDetail(&screen, state)
        default: return nil
        }
        return []
    }

    /// The owner edits a share: its current user participation says so, or (a share not yet
    /// answered with one, e.g. a new one) the private database it lives in.
    static func isShareOwner(_ share: Record, _ state: BrowserState) -> Bool {
        share.currentUserParticipant.map { $0.type == .owner } ?? (state.connection.database == .private)
    }

    /// The share as staged so far, else as the server sent it.
    static func currentShareEdit(_ share: Record, _ key: RecordKey, _ state: BrowserState) -> ShareEdit {
        state.staged.operation(for: key)?.share ?? ShareEdit(of: share)
    }

    /// Stages a share's edit (the share record shown, `key`); its view settles after.
    static func stageShare(_ edit: ShareEdit, _ share: Record, _ key: RecordKey, _ state: inout BrowserState, as change: Notice.StagedChange) {
        // A share staged for creation keeps being one; otherwise an update of the share record
        // (staging merges it with an earlier edit, whose base stays).
        var op = StagedOperation(kind: .update, zone: key.zone, base: share)
        if let existing = state.staged.operation(for: key), existing.mode == .create { op = existing }
        op.share = edit
        state.staged.stage(op)
        state.say(.staged(change, total: state.staged.operations.count))
    }

    /// `i`'s input: `EMAIL [READ_ONLY|READ_WRITE]` (READ_ONLY when left out).
    static func invite(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let words = text.split(separator: " ").map(String.init)
        guard let detail = state.detailScreen?.detail, let share = detail.record, share.isShare, let address = words.first, words.count <= 2 else {
            refuse(.inviteUsage, &state)
            return []
        }
        let permission = words.count == 2 ? SharePermission(rawValue: words[1].uppercased()) : .readOnly
        guard permission == .readOnly || permission == .readWrite else {
            refuse(.invalidPermission(words[1]), &state)
            return []
        }
        var edit = currentShareEdit(share, detail.key, state)
        let lookup = address.contains("@") ? UserLookupInfo(emailAddress: address) : (address.hasPrefix("_") ? UserLookupInfo(userRecordName: address) : UserLookupInfo(phoneNumber: address))
        let participant = ShareParticipant.invite(lookup, permission: permission)
        if let i = edit.participants.firstIndex(where: { ShareEdit.who($0).lowercased() == address.lowercased() }) {
            edit.participants[i].permission = permission
        } else {
            edit.participants.append(participant)
        }
        stageShare(edit, share, detail.key, &state, as: .invited(address, permission))
        settleOpenRecord(&state)
        return []
    }

    /// `:share`: a new share, staged. In a record: of that record (and the records below it); in a
    /// zone's list: of the whole zone. Custom zones of the private database only, as CloudKit has it.
    static func shareCommand(_ state: inout BrowserState) -> [BrowserEffect] {
        guard writable(&state) else { return [] }
        guard state.connection.database == .private else {
            state.say(.shareNeeds(.privateDatabase))
            return []
        }
        let inRecord = state.pane == .recordDetail
        guard let zone = inRecord ? state.detailScreen?.detail.key.zone : state.recordsScreen?.list.zone, !zone.zoneID.isDefaultZone else {
            state.say(.shareNeeds(.customZone))
            return []
        }
        var root: RecordLink?
        var name = Record.zoneShareName
        if inRecord {
            guard let record = state.detailScreen?.detail.record else {
                state.say(.shareNeeds(.aRecord))
                return []
            }
            guard !record.isShare else {
                state.say(.shareNeeds(.notAShare))
                return []
            }
            if let existing = record.share {
                state.say(.alreadyShared(record.recordName, share: existing.recordName))
                return []
            }
            root = RecordLink(recordName: record.recordName, recordChangeTag: record.recordChangeTag)
            name = "share-" + record.recordName
        }
        var op = StagedOperation.newRecord(zone: zone, recordType: Record.shareRecordType, recordName: name)
        op.share = ShareEdit(newShareOf: root)
        if inRecord { op.share?.root = state.detailScreen?.detail.record }
        state.staged.stage(op)
        // The new share opens, so participants can be invited at once (i).
        state.stack.push(.detail(DetailScreen(RecordDetail(key: op.key, record: Record(recordName: name, recordType: Record.shareRecordType), loading: false))))
        settleOpenRecord(&state, toFirst: true)
        state.say(.stagedNewShare(record: root?.recordName, zone: zone.zoneID.zoneName))

        return []
    }

    // MARK: Everything shared

    /// `:shares`: the share records of every zone of the database.
    static func openShares(_ state: inout BrowserState) -> [BrowserEffect] {
        state.stack.open(.shares)
        modifyShares(&state) { $0.shares.loading = true }
        return [.loadShares(state.connection.database)]
    }

    /// Changes the shares screen (on the stack, else aside), when there is one.
    static func modifyShares(_ state: inout BrowserState, _ change: (inout SharesScreen) -> Void) {
        state.stack.modify(.shares) {
            guard case .shares(var screen) = $0 else { return }
            change(&screen)
            $0 = .shares(screen)
        }
    }

    static func sharesKey(_ key: Key, _ screen: inout SharesScreen, _ state: inout BrowserState) -> [BrowserEffect] {
        let shares = screen.shares.value
        if moveList(key, &screen.position.selection, &screen.position.scroll, count: shares.count, height: listHeight(state)) { return [] }
        switch key {
        case .char("r"):
            screen.shares.loading = true
            return [.loadShares(state.connection.database)]
        case .enter, .char("l"), .right:
            // The share record, in its zone (opened underneath, so Esc goes back to its list).
            guard shares.indices.contains(screen.position.selection), let zoneID = shares[screen.position.selection].zoneID else { return [] }
            let name = shares[screen.position.selection].recordName
            var effects = openZone(zoneID, &state)
            effects += openRecord(RecordKey(zone: state.connection.zone(zoneID), recordName: name), &state)
            return effects
        default: return []
        }
    }

    /// One row of `:shares`: zone (and owner), what is shared, public permission, participants.
    static func shareRow(_ share: Record, _ state: BrowserState) -> [String] {
        let zone = share.zoneID.map { state.zoneName(state.connection.zone($0)) } ?? "?"
        let what = share.recordName == Record.zoneShareName ? "the whole zone" : "records (\(share.recordName))"
        let others = (share.participants ?? []).filter { $0.type != .owner && $0.acceptanceStatus != .removed }
        let accepted = others.filter { $0.acceptanceStatus == .accepted }.count
        let people = others.isEmpty ? "none" : "\(others.count) (\(accepted) accepted)"
        let you = share.currentUserParticipant.map { $0.type == .owner ? "owner" : ($0.permission?.rawValue ?? "?") } ?? ""
        return [zone, what, (share.publicPermission ?? .noPermission).rawValue, people, you]
    }
}
