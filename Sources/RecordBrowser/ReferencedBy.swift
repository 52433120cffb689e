import CloudKitModels

/// The records that refer to an open record (its view's "referenced by"), as far as the local cache
/// knows: found once when the record is loaded (`findReferencedBy`), kept in the record's view.
public struct ReferencedBy: Sendable, Hashable {
    /// Each reference to the record (a record referring to it from two fields is listed twice).
    public var referrers: [Referrer]
    /// Cached records of the zone that were read.
    public var looked: Int
    /// The whole zone is in the cache (its change feed was read to the end): nothing is missing.
    public var wholeZone: Bool

    public init(referrers: [Referrer], looked: Int, wholeZone: Bool) {
        self.referrers = referrers
        self.looked = looked
        self.wholeZone = wholeZone
    }

    /// Lines listed at most (the rest are counted, not listed): the view is drawn on every key.
    static let listed = 200

    /// The record's view's section: a heading, what was looked at, then the referrers grouped by
    /// referring type and field with the action, each line followed by Enter.
    func lines(in zone: ZoneKey) -> [DetailLine] {
        let owner = "\u{1F}referenced-by"
        let records = Set(referrers.map(\.key.recordName)).count
        var lines = [DetailLine(field: "REFERENCED BY", type: "", text: referrers.isEmpty ? "no record" : Format.plural(records, "record"), isHeading: true)]
        let scope = wholeZone
            ? "every record of the zone is cached: \(Format.plural(looked, "record")) looked at"
            : "only the cached part of the zone was looked at (\(Format.plural(looked, "record"))): records not fetched yet are not counted"
        lines.append(DetailLine(field: "", type: "", text: scope, owner: owner))
        var groups: [String: [Referrer]] = [:]
        var order: [String] = []
        for r in referrers {
            let label = "\(r.recordType ?? "record").\(r.field) → \(r.action?.rawValue ?? "no action")"
            if groups[label] == nil { order.append(label) }
            groups[label, default: []].append(r)
        }
        var shown = 0
        for label in order {
            let group = groups[label]!
            lines.append(DetailLine(field: " " + label, type: "", text: "(\(Format.count(group.count)))", isHeading: true))
            for r in group {
                guard shown < Self.listed else { break }
                shown += 1
                let reference = Reference(recordName: r.key.recordName, action: r.action ?? .noAction)
                lines.append(DetailLine(field: r.field, type: r.action?.rawValue ?? "", text: r.key.recordName, reference: reference))
            }
        }
        if shown < referrers.count {
            lines.append(DetailLine(field: "", type: "", text: "… \(Format.count(referrers.count - shown)) more not listed", owner: owner))
        }
        return lines
    }
}

extension Browser {
    /// The open record's "referenced by" lines (none until the cache has answered).
    static func referencedByLines(_ detail: RecordDetail) -> [DetailLine] {
        guard detail.record != nil, let found = detail.referencedBy else { return [] }
        return found.lines(in: detail.zone)
    }

    /// The cache's answer: kept with the record's view it was asked for (and with the views it was
    /// followed from, for Esc).
    static func referencedByFound(_ key: RecordKey, _ found: ReferencedBy, _ state: inout BrowserState) {
        state.stack.modify(.recordDetail) {
            guard case .detail(var screen) = $0 else { return }
            if screen.detail.key == key { screen.detail.referencedBy = found }
            for i in screen.history.indices where screen.history[i].key == key { screen.history[i].referencedBy = found }
            $0 = .detail(screen)
        }
    }
}
