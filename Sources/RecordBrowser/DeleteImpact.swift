import CloudKitModels

/// A cached record whose field refers to a record being deleted.
public struct Referrer: Sendable, Hashable {
    public var key: RecordKey
    public var recordType: String?
    public var field: String
    /// The reference's action (nil: none was sent).
    public var action: ReferenceAction?
    /// The record it refers to: the staged delete, or a record the cascade deletes.
    public var target: String

    public init(key: RecordKey, recordType: String?, field: String, action: ReferenceAction?, target: String) {
        self.key = key
        self.recordType = recordType
        self.field = field
        self.action = action
        self.target = target
    }
}

/// What deleting a record does to the records that refer to it, as far as the local cache knows:
/// `DELETE_SELF` referrers are deleted too (and theirs, recursively), `NONE` ones are left referring
/// to nothing, `VALIDATE` ones make the server refuse the delete.
public struct DeleteImpact: Sendable, Hashable {
    /// Every referrer found, the cascade followed (a referrer deleted by the cascade is listed once).
    public var referrers: [Referrer]
    /// The cascade stopped at this many records (nil: followed to the end).
    public var truncatedAt: Int?

    public init(referrers: [Referrer], truncatedAt: Int? = nil) {
        self.referrers = referrers
        self.truncatedAt = truncatedAt
    }

    /// Records the cascade deletes (each once).
    public var cascade: [Referrer] { unique(referrers.filter { $0.action == .deleteSelf }) }
    /// Records left referring to a deleted record (NONE, or no action).
    public var dangling: [Referrer] { unique(referrers.filter { $0.action == .noAction || $0.action == nil }).filter { r in !cascade.contains { $0.key == r.key } } }
    /// Records whose VALIDATE reference makes the server refuse the delete.
    public var blocking: [Referrer] { unique(referrers.filter { $0.action == .validate }).filter { r in !cascade.contains { $0.key == r.key } } }

    private func unique(_ list: [Referrer]) -> [Referrer] {
        var seen: Set<RecordKey> = []
        return list.filter { seen.insert($0.key).inserted }
    }

    /// `170 Artwork (artist → DELETE_SELF)`: counts per record type and field, largest first.
    static func groups(_ list: [Referrer]) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for r in list {
            let label = "\(r.recordType ?? "record") (\(r.field) → \(r.action?.rawValue ?? "no action"))"
            if counts[label] == nil { order.append(label) }
            counts[label, default: 0] += 1
        }
        return order.sorted { counts[$0]! > counts[$1]! }.map { "\(Format.count(counts[$0]!)) \($0)" }.joined(separator: ", ")
    }

    /// The batch's and the preview's lines for one staged delete (none when nothing refers to it).
    public func lines(deleting name: String) -> [(text: String, bad: Bool)] {
        var lines: [(String, Bool)] = []
        let cascade = self.cascade, dangling = self.dangling, blocking = self.blocking
        if !cascade.isEmpty {
            lines.append(("deleting \(name) also deletes \(Format.plural(cascade.count, "record")): \(Self.groups(cascade))", true))
        }
        if !blocking.isEmpty {
            lines.append(("\(Format.plural(blocking.count, "record")) refer to it with VALIDATE: the server will refuse the delete (\(Self.groups(blocking)))", true))
        }
        if !dangling.isEmpty {
            lines.append(("\(Format.plural(dangling.count, "record")) will refer to nothing: \(Self.groups(dangling))", false))
        }
        if let truncatedAt { lines.append(("the cascade was followed for \(Format.count(truncatedAt)) records only: it deletes at least that many", true)) }
        if !lines.isEmpty { lines.append(("(from the local cache: records not fetched yet are not counted)", false)) }
        return lines
    }
}

extension Browser {
    /// Staged deletes whose impact is not known yet: marked as being looked for, and the cache scan.
    static func deleteImpactChecks(_ state: inout BrowserState) -> [BrowserEffect] {
        let keys = state.staged.operations.filter { $0.kind == .delete && state.known.impacts[$0.key] == nil }.map(\.key)
        guard !keys.isEmpty else { return [] }
        for key in keys { state.known.impacts[key] = DeleteImpact(referrers: []) }
        return [.findReferrers(keys)]
    }

    /// Everything looked up about what is staged: VALIDATE targets and delete impacts.
    static func stagedLookups(_ state: inout BrowserState) -> [BrowserEffect] {
        ChangeWords.checkTargets(&state) + deleteImpactChecks(&state)
    }

    static func referrersFound(_ impacts: [RecordKey: DeleteImpact], _ state: inout BrowserState) {
        for (key, impact) in impacts { state.known.impacts[key] = impact }
        // What a delete just staged does is said at once.
        if let found = impacts.first(where: { !$0.value.cascade.isEmpty || !$0.value.blocking.isEmpty }), state.staged.operation(for: found.key)?.kind == .delete {
            state.say(.deleteImpact(record: found.key.recordName, found.value))
        }
    }
}
