import CloudKitModels
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import TerminalUI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How values read on screen.
public enum Format {
    /// The zone "local" times are shown in: the system's (libc's, from `TZ` or /etc/localtime) or UTC
    /// (tests pin it for stable snapshots). Behind a lock: test suites run in parallel and any of them
    /// may set it. Not Foundation's `TimeZone`: without FoundationInternationalization (ICU), which this
    /// binary does not link, `TimeZone.current` stops the process.
    public static var localTimeZone: DisplayZone {
        get { zoneBox.lock.withLock { zoneBox.zone } }
        set { zoneBox.lock.withLock { zoneBox.zone = newValue } }
    }

    /// Where a time is shown.
    public enum DisplayZone: Sendable { case system, utc }

    private final class ZoneBox: @unchecked Sendable {
        let lock = Lock()
        var zone: DisplayZone = .system
    }

    private static let zoneBox = ZoneBox()

    /// The civil time of an instant in a zone, with the zone's offset and abbreviation then.
    struct CivilTime {
        var year, month, day, hour, minute, second: Int
        var offsetSeconds: Int
        var abbreviation: String
    }

    static func civilTime(_ milliseconds: Int64, _ zone: DisplayZone) -> CivilTime {
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        var parts = tm()
        switch zone {
        case .utc: gmtime_r(&seconds, &parts)
        case .system: localtime_r(&seconds, &parts)
        }
        let abbreviation = zone == .utc ? "UTC" : parts.tm_zone.map { String(cString: $0) } ?? ""
        return CivilTime(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec),
            offsetSeconds: zone == .utc ? 0 : Int(parts.tm_gmtoff), abbreviation: abbreviation)
    }

    /// `1 operation`, `3 operations`, `1,200 records` (regular English plurals only).
    public static func plural(_ n: Int, _ noun: String) -> String {
        "\(count(n)) \(noun)\(n == 1 ? "" : "s")"
    }

    /// The word that agrees with a count: `agree(1, "stays", "stay")` is `stays`.
    public static func agree(_ n: Int, _ one: String, _ many: String) -> String { n == 1 ? one : many }

    /// `2024-03-01 12:00:00 UTC`.
    public static func utc(_ milliseconds: Int64) -> String {
        dateString(civilTime(milliseconds, .utc)) + " UTC"
    }

    /// UTC, then local time, or UTC once when local time is UTC at that moment.
    public static func utcAndLocal(_ milliseconds: Int64) -> String {
        let local = civilTime(milliseconds, localTimeZone)
        if local.offsetSeconds == 0 { return utc(milliseconds) }
        return utc(milliseconds) + " · " + dateString(local) + " " + local.abbreviation
    }

    /// Local time with the zone's abbreviation.
    public static func local(_ milliseconds: Int64) -> String {
        let local = civilTime(milliseconds, localTimeZone)
        return dateString(local) + " " + local.abbreviation
    }

    static func dateString(_ c: CivilTime) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(c.year)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second))"
    }

    /// Short list-column form: `2024-03-01 12:00`.
    public static func short(_ milliseconds: Int64?) -> String {
        guard let milliseconds else { return "" }
        return String(dateString(civilTime(milliseconds, localTimeZone)).dropLast(3))
    }

    /// `1 item`, `3 items`.
    public static func items(_ n: Int) -> String { n == 1 ? "[1 item]" : "[\(count(n)) items]" }

    /// `1,234,567`.
    public static func count(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return String(out.reversed())
    }

    /// What `y` puts on the clipboard for a JSON value: pretty-printed, with control, bidi and invisible
    /// characters written as `\uXXXX` (`TerminalText.json`), the same JSON value with nothing hidden
    /// in it.
    public static func copyJSON(_ value: JSON) -> String {
        TerminalText.json(value.prettyPrinted())
    }

    /// A JSON value on one line, escaped as `copyJSON` is.
    public static func compactJSON(_ value: JSON) -> String {
        TerminalText.json(value.text)
    }

    static func hex(_ data: Data, limit: Int = 16) -> String {
        let bytes = data.prefix(limit).map { String(cFormat: "%02x", $0) }.joined(separator: " ")
        return data.count > limit ? bytes + " …" : bytes
    }

    /// A scalar value on one line.
    public static func scalar(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): return s
        case .int64(let i): return String(i)
        case .double(let d): return d.description
        case .timestamp(let t): return "\(utcAndLocal(t)) · \(t)"
        case .bytes(let d), .encryptedBytes(let d):
            let b64 = d.base64EncodedString()
            return "\(d.count) bytes · hex \(hex(d)) · base64 \(b64.count > 24 ? String(b64.prefix(24)) + "…" : b64)"
        case .reference(let r):
            var text = "→ \(r.recordName)"
            if let zone = r.zoneID { text += " (zone \(zone.zoneName))" }
            if let action = r.action { text += " · \(action.rawValue)" }
            return text
        case .asset(let a):
            // The download URL is left out: it is long, and it is the permission to read the file.
            if let path = a.localFilePath {
                return "file \(path) · \(a.size.map { AssetProgress.bytes($0) } ?? "?") · uploaded on commit"
            }
            var parts: [String] = []
            if let size = a.size { parts.append("\(count(Int(size))) bytes") }
            if let checksum = a.fileChecksum { parts.append("checksum \(checksum)") }
            if a.downloadURL == nil { parts.append("no download URL") }
            return parts.joined(separator: " · ")
        case .location(let l):
            var text = String(cFormat: "%.6f, %.6f", l.latitude, l.longitude)
            if let h = l.horizontalAccuracy { text += " ±\(h.description) m" }
            if let alt = l.altitude { text += " · alt \(alt.description) m" }
            if let v = l.verticalAccuracy { text += " ±\(v.description) m" }
            if let s = l.speed { text += " · \(s.description) m/s" }
            if let c = l.course { text += " · course \(c.description)°" }
            if let t = l.timestamp { text += " · \(utc(t))" }
            return text
        case .null: return "null"
        case .other(let type, let value): return "\(type): \(value.text)"
        default: return "\(value.listCount ?? 0) items"
        }
    }
}

extension Browser {
    /// The detail view's lines: fields (lists expanded, long strings wrapped later by the renderer),
    /// then the system fields.
    /// `userName` says a user record name as people read it (`userName(_:_:)`); `y` on a "by" line
    /// copies the record name itself.
    public static func detailLines(_ detail: RecordDetail, staged: StagedOperation? = nil, userName: (String) -> String = { $0 }) -> [DetailLine] {
        guard let record = detail.record else { return [] }
        var fields = record.fields
        var marks: [String: StageMark] = [:]
        var lines: [DetailLine] = []
        if let staged, staged.kind == .delete {
            lines.append(DetailLine(field: "STAGED", type: "", text: "FOR DELETION (u unstages, b shows the batch)", isHeading: true, mark: .deleted))
        }
        if let staged, staged.kind == .update {
            for (name, value) in staged.changes {
                if value == .null { marks[name] = .cleared } else { fields[name] = value; marks[name] = .changed }
            }
        }
        lines.append(DetailLine(field: "FIELDS", type: "", text: "\(fields.count - marks.values.filter { $0 == .cleared }.count)", isHeading: true))
        for name in Set(fields.keys).sorted() {
            let value = fields[name]!
            let mark = marks[name]
            if mark == .cleared {
                let old = record.fields[name].map(Format.scalar) ?? "unset"
                lines.append(DetailLine(field: name, type: value.type.rawValue, text: "∅ cleared (staged; was \(old))", owner: name, mark: .cleared))
                continue
            }
            let copy = Format.copyJSON(.object(JSONObject(pairs: [(key: name, value: value.json)])))
            if value.isList {
                lines.append(DetailLine(field: name, type: value.type.rawValue, text: Format.items(value.listCount ?? 0), copyJSON: copy, owner: name, mark: mark))
                for (i, element) in value.listElements.enumerated() {
                    var reference: Reference?
                    if case .reference(let r) = element { reference = r }
                    lines.append(DetailLine(field: "", type: "", text: "[\(i)] " + Format.scalar(element), reference: reference, copyJSON: Format.copyJSON(element.json), owner: name, mark: mark, element: i))
                }
            } else {
                var reference: Reference?
                if case .reference(let r) = value { reference = r }
                let text = Format.scalar(value)
                let parts = text.split(separator: "\n", omittingEmptySubsequences: false)
                lines.append(DetailLine(field: name, type: value.type.rawValue, text: String(parts[0]), reference: reference, copyJSON: copy, owner: name, mark: mark))
                for more in parts.dropFirst() { lines.append(DetailLine(field: "", type: "", text: String(more), copyJSON: copy, owner: name, mark: mark)) }
            }
            if mark == .changed {
                // A list's old elements, not just their count, so an element's edit can be compared.
                let old = record.fields[name].map { value in
                    value.isList ? "[" + value.listElements.prefix(20).map(Format.scalar).joined(separator: ", ") + ((value.listCount ?? 0) > 20 ? ", … \(Format.count((value.listCount ?? 0) - 20)) more" : "") + "]" : Format.scalar(value)
                } ?? "unset (a new field)"
                lines.append(DetailLine(field: "", type: "", text: "was: " + old.replacing("\n", with: "⏎"), owner: name, mark: .was))
            }
        }
        lines.append(DetailLine(field: "SYSTEM", type: "", text: "", isHeading: true))
        func add(_ field: String, _ text: String?, copy: String? = nil) {
            if let text { lines.append(DetailLine(field: field, type: "", text: text, copyJSON: copy)) }
        }
        add("recordName", record.recordName)
        add("recordType", record.recordType)
        add("changeTag", record.recordChangeTag)
        add("zone", detail.zoneID.zoneName)
        if let c = record.created {
            add("created", Format.utcAndLocal(c.timestamp))
            add("  by", [c.userRecordName.map(userName), c.deviceID.map { "device \($0)" }].compactMap { $0 }.joined(separator: " · "), copy: c.userRecordName)
        }
        if let m = record.modified {
            add("modified", Format.utcAndLocal(m.timestamp))
            add("  by", [m.userRecordName.map(userName), m.deviceID.map { "device \($0)" }].compactMap { $0 }.joined(separator: " · "), copy: m.userRecordName)
        }
        add("shortGUID", record.shortGUID)
        if let share = record.share {
            lines.append(DetailLine(field: "share", type: "", text: "→ \(share.recordName)", reference: Reference(recordName: share.recordName, zoneID: share.zoneID, action: nil)))
        }
        if let parent = record.parent {
            lines.append(DetailLine(field: "parent", type: "", text: "→ \(parent.recordName)", reference: Reference(recordName: parent.recordName, zoneID: parent.zoneID, action: nil)))
        }
        if !record.encryptedFieldNames.isEmpty { add("encrypted", record.encryptedFieldNames.sorted().joined(separator: ", ")) }
        return lines
    }

    /// A share record's view: who it is shared with and how, above its fields, with what is staged
    /// for it (participants are lines of their own: `p` and `x` act on the selected one).
    static func shareLines(_ share: Record, key: RecordKey, _ state: BrowserState) -> [DetailLine] {
        let staged = state.staged.operation(for: key)?.share
        let edit = staged ?? ShareEdit(of: share)
        var lines = [DetailLine(field: "SHARE", type: "", text: staged == nil ? "" : "changes staged", isHeading: true)]
        func add(_ field: String, _ text: String, owner: String? = nil, element: Int? = nil, mark: StageMark? = nil) {
            lines.append(DetailLine(field: field, type: "", text: text, owner: owner, mark: mark, element: element))
        }
        func person(_ p: ShareParticipant) -> String {
            let recordName = p.userIdentity?.userRecordName
            let given = [p.userIdentity?.nameComponents?.givenName, p.userIdentity?.nameComponents?.familyName].compactMap { $0 }.joined(separator: " ")
            let name = given.isEmpty ? (recordName.flatMap { state.userNames[$0] } ?? recordName ?? "") : given
            let email = p.userIdentity?.lookupInfo?.emailAddress ?? p.userIdentity?.lookupInfo?.phoneNumber
            let me = recordName != nil && recordName == state.connection.account.identity.userRecordName
            return [name.isEmpty ? nil : name, email.map { "<\($0)>" }, me ? "(you)" : nil].compactMap { $0 }.joined(separator: " ")
        }
        if let owner = share.owner { add("owner", person(owner)) }
        let root = edit.forRecord ?? share.forRecord
        add("shares", root.map { "'\($0.recordName)' and the records below it" } ?? (share.recordName == Record.zoneShareName ? "the whole zone" : "a record and the records below it (its share field links here)"))
        let publicChanged = staged != nil && edit.publicPermission != edit.basePublicPermission
        add("public", (edit.publicPermission ?? .noPermission).rawValue + (publicChanged ? " (was \((edit.basePublicPermission ?? .noPermission).rawValue))" : ""),
            owner: "publicPermission", mark: publicChanged ? .changed : nil)
        add("participants", edit.participants.isEmpty ? "none" : Format.plural(edit.participants.count, "participant"), owner: "participants")
        for (i, p) in edit.participants.enumerated() {
            let before = edit.baseParticipants.first { ShareEdit.who($0) == ShareEdit.who(p) }
            let changed = staged != nil && before != p
            let status = before == nil && staged != nil ? "to invite" : (p.acceptanceStatus?.rawValue ?? "?")
            add("", "\(person(p)) · \(p.permission?.rawValue ?? "?") · \(status)", owner: "participants", element: i, mark: changed ? .changed : nil)
        }
        for gone in edit.baseParticipants where staged != nil && !edit.participants.contains(where: { ShareEdit.who($0) == ShareEdit.who(gone) }) {
            add("", "\(person(gone)) · to remove", owner: "participants", mark: .cleared)
        }
        if let mine = share.currentUserParticipant, mine.type != .owner {
            add("you", "\(mine.permission?.rawValue ?? "?") · \(mine.acceptanceStatus?.rawValue ?? "?")")
        }
        if let guid = share.shortGUID {
            add("shortGUID", guid)
            switch state.connection.server {
            case .embeddedDemo: add("accept", ":accept \(guid) (as the participant: ckbrowse --demo-user guest)")
            case .url(let url):
                add("URL", state.connection.server.isAppleDefault ? "https://www.icloud.com/share/\(guid)" : url + "/share/" + guid)
            }
        }
        if share.currentUserParticipant.map({ $0.type == .owner }) ?? (state.connection.database == .private) {
            add("keys", "i invite by email · p permission of the selected · x remove them · P public permission · d stop sharing")
        }
        return lines
    }

    /// The raw JSON view, wrapped to the width: nothing is cut.
    public static func rawLines(_ detail: RecordDetail, width: Int) -> [String] {
        guard let raw = detail.raw ?? detail.record?.json else { return [] }
        return TextWidth.wrap(Format.copyJSON(raw), to: Layout.wrapWidth(width))
    }

    /// The subscription detail: the whole definition.
    public static func subscriptionLines(_ state: BrowserState, raw: Bool = false) -> [String] {
        guard let row = Browser.selectedSubscriptionRow(state) else { return [] }
        var head: [String] = []
        switch row {
        case .fired: head = ["FIRED: firesOnce, so the server deleted it after it fired — R stages it to be created again", ""]
        case .listed(_, let op?), .new(let op):
            switch op.kind {
            case .create: head.append("STAGED: \(op.recreatesFired ? "to be created again" : "new") — c commits, u unstages, E edits")
            case .update: head.append("STAGED: a change — c commits, u unstages, E edits again")
            case .delete: head.append("STAGED: deletion — c commits, u unstages")
            }
            if op.kind == .update { head += op.diff.map { "  \($0.key): \($0.old ?? "—") → \($0.new ?? "—")" } }
            if let failure = op.failure {
                head.append("REFUSED by the last commit: " + (failure.code.map { "\($0.rawValue): \(failure.reason ?? "")" } ?? (failure.reason ?? "no result for it")))
            }
            head.append("")
        case .listed(_, nil): break
        }
        if raw {
            return head + ["RAW JSON as received: keys, order and values unchanged, re-indented — v: the summary", ""]
                + Format.copyJSON(row.json).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        if case .listed(.failure(let error), _) = row {
            return ["error for \(error.subscriptionID ?? "?"): \(error.serverErrorCode.rawValue)", error.reason ?? ""]
        }
        guard let s = row.subscription else { return head }
        var lines = head + ["subscriptionID     \(s.subscriptionID ?? "")", "subscriptionType   \(s.subscriptionType.rawValue)"]
        if let zone = s.zoneID { lines.append("zoneID             \(zone.zoneName)\(zone.ownerRecordName.map { " (owner \($0))" } ?? "")") }
        if let q = s.query {
            lines.append("query.recordType   \(q.recordType)")
            for (i, f) in (q.filterBy ?? []).enumerated() {
                let field = f.fieldName ?? "system:" + (f.systemFieldName?.rawValue ?? "?")
                var text = "filter[\(i)]          \(field) \(f.comparator.rawValue) \(f.fieldValue.type.rawValue) \(Format.scalar(f.fieldValue))"
                if f.fieldValue.isList { text += " " + f.fieldValue.listElements.map(Format.scalar).joined(separator: ", ") }
                if let d = f.distance { text += " within \(d.description) m" }
                lines.append(text)
            }
            for (i, sort) in (q.sortBy ?? []).enumerated() {
                lines.append("sort[\(i)]            \(sort.fieldName ?? sort.systemFieldName?.rawValue ?? "?") \(sort.isAscending ? "ascending" : "descending")")
            }
        }
        if let firesOn = s.firesOn { lines.append("firesOn            \(firesOn.map(\.rawValue).joined(separator: ", "))") }
        if let once = s.firesOnce { lines.append("firesOnce          \(once)") }
        if let wide = s.zoneWide { lines.append("zoneWide           \(wide)") }
        if let info = s.notificationInfo, case .object(let object) = info.json {
            lines.append("notificationInfo")
            for (key, value) in object.pairs { lines.append("  \(key)\(String(repeating: " ", count: max(1, 28 - key.count)))\(Format.compactJSON(value))") }
        } else {
            lines.append("notificationInfo   (none)")
        }
        return lines + subscriptionNotificationLines(state, id: s.subscriptionID)
    }
}
