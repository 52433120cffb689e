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

/// A reference field the server can be asked about (`field EQUALS <reference>`, or LIST_CONTAINS for a
/// list): QUERYABLE in the schema.
public struct ReferenceField: Sendable, Hashable {
    public var recordType: String
    public var field: String
    public var isList: Bool

    public init(recordType: String, field: String, isList: Bool) {
        self.recordType = recordType
        self.field = field
        self.isList = isList
    }

    /// `Artwork.artist`.
    public var label: String { "\(recordType).\(field)" }
}

/// What the server said of the records that refer to one staged delete (records/query per QUERYABLE
/// reference field, every page, the DELETE_SELF cascade followed).
public struct ServerReferrers: Sendable, Hashable {
    public var referrers: [Referrer]
    /// The cascade or the query budget stopped here (nil: followed to the end).
    public var truncatedAt: Int?
    /// Why the count is not whole (a query failed), if it is not.
    public var failure: String?

    public init(referrers: [Referrer], truncatedAt: Int? = nil, failure: String? = nil) {
        self.referrers = referrers
        self.truncatedAt = truncatedAt
        self.failure = failure
    }
}

/// Whether the server was asked about a staged delete's referrers.
public enum ServerCheck: Sendable, Hashable {
    /// Not asked, and why (no schema with indexes, a bulk delete too large to ask about).
    case notAsked(String)
    /// Asked once the schema (which says what is QUERYABLE) has loaded.
    case waitingForSchema
    /// Queries are out for these fields.
    case asking([ReferenceField])
    /// The server answered for these fields.
    case counted([ReferenceField], ServerReferrers)

    /// The server named at least one referrer.
    var found: Bool { if case .counted(_, let r) = self { return !r.referrers.isEmpty } else { return false } }
}

/// What deleting a record does to the records that refer to it, from the local cache and, where the
/// schema makes the reference field QUERYABLE, from the server: `DELETE_SELF` referrers are deleted too
/// (and theirs, recursively), `NONE` ones are left referring to nothing, `VALIDATE` ones make the
/// server refuse the delete.
public struct DeleteImpact: Sendable, Hashable {
    /// Every referrer the cache holds, the cascade followed (a referrer deleted by the cascade is listed once).
    public var referrers: [Referrer]
    /// The cascade stopped at this many records (nil: followed to the end).
    public var truncatedAt: Int?
    /// What the server was asked and said.
    public var server: ServerCheck = .notAsked("")
    /// Reference fields the schema has no QUERYABLE index on: the server cannot be asked about them.
    public var notQueryable: [String] = []
    /// The cache has been searched (until then `referrers` says nothing; a commit waits for it).
    public var cacheSearched = false

    public init(referrers: [Referrer], truncatedAt: Int? = nil) {
        self.referrers = referrers
        self.truncatedAt = truncatedAt
    }

    /// The cache's referrers and the server's, each reference once (union by record, field and target).
    public var all: [Referrer] {
        guard case .counted(_, let found) = server, !found.referrers.isEmpty else { return referrers }
        var seen = Set(referrers.map { ReferenceSeen(name: $0.key.recordName, field: $0.field, target: $0.target) })
        return referrers + found.referrers.filter { seen.insert(ReferenceSeen(name: $0.key.recordName, field: $0.field, target: $0.target)).inserted }
    }

    private struct ReferenceSeen: Hashable {
        var name: String, field: String, target: String
    }

    /// Records the cascade deletes (each once).
    public var cascade: [Referrer] { unique(all.filter { $0.action == .deleteSelf }) }
    /// Records left referring to a deleted record (NONE, or no action).
    public var dangling: [Referrer] {
        let deleted = Set(cascade.map(\.key))
        return unique(all.filter { $0.action == .noAction || $0.action == nil }).filter { !deleted.contains($0.key) }
    }
    /// Records whose VALIDATE reference makes the server refuse the delete.
    public var blocking: [Referrer] {
        let deleted = Set(cascade.map(\.key))
        return unique(all.filter { $0.action == .validate }).filter { !deleted.contains($0.key) }
    }

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
    /// `batchDeletes`: the records the same batch deletes. A referrer among them is neither deleted by
    /// the cascade nor left dangling nor refusing the delete (it goes anyway), so it is not counted as
    /// such; a line says how many there were.
    public func lines(deleting name: String, batchDeletes: Set<RecordKey> = []) -> [(text: String, bad: Bool)] {
        var lines: [(String, Bool)] = []
        var cascade = self.cascade, dangling = self.dangling, blocking = self.blocking
        var alsoStaged = 0
        if !batchDeletes.isEmpty {
            // Records, not references: one referring by two fields (NONE and VALIDATE) is counted once.
            alsoStaged = Set((cascade + dangling + blocking).map(\.key)).intersection(batchDeletes).count
            cascade.removeAll { batchDeletes.contains($0.key) }
            dangling.removeAll { batchDeletes.contains($0.key) }
            blocking.removeAll { batchDeletes.contains($0.key) }
        }
        if !cascade.isEmpty {
            lines.append(("deleting \(name) also deletes \(Format.plural(cascade.count, "record")): \(Self.groups(cascade))", true))
        }
        if !blocking.isEmpty {
            lines.append(("\(Format.plural(blocking.count, "record")) refer to it with VALIDATE: the server will refuse the delete (\(Self.groups(blocking)))", true))
        }
        if !dangling.isEmpty {
            lines.append(("\(Format.plural(dangling.count, "record")) will refer to nothing: \(Self.groups(dangling))", false))
        }
        if alsoStaged > 0 {
            lines.append(("\(Format.plural(alsoStaged, "record")) referring to it \(alsoStaged == 1 ? "is" : "are") deleted by this batch too", false))
        }
        if let truncatedAt { lines.append(("the cascade was followed for \(Format.count(truncatedAt)) records only: it deletes at least that many", true)) }
        switch server {
        case .counted(let fields, let found):
            if let at = found.truncatedAt { lines.append(("the server was asked about \(Format.count(at)) records only: the counts are at least these", true)) }
            if let failure = found.failure { lines.append(("the server could not be asked everything (\(failure)): the counts are at least these", true)) }
            if !lines.isEmpty || !notQueryable.isEmpty {
                lines.append(("(counted by the server for \(fields.map(\.label).joined(separator: ", ")), and from the local cache)", false))
            }
        case .asking(let fields):
            lines.append(("asking the server about \(fields.map(\.label).joined(separator: ", "))…", false))
        case .notAsked(let why):
            if !lines.isEmpty { lines.append(("(from the local cache: records not fetched yet are not counted\(why.isEmpty ? "" : "; the server was not asked: " + why))", false)) }
        case .waitingForSchema:
            if !lines.isEmpty { lines.append(("(from the local cache: records not fetched yet are not counted; the server is asked once the schema has loaded)", false)) }
        }
        for field in notQueryable { lines.append(("\(field) not QUERYABLE: not asked (only cached records counted)", false)) }
        return lines
    }
}

extension Browser {
    /// Deletes of more records than this at once are not asked about on the server (a query per
    /// record and field): the cache alone counts them.
    static let serverAskLimit = 50

    /// The reference fields of the schema: those the server can be asked about (QUERYABLE) and those
    /// it cannot (`Artwork.previousOwners`); nil when no schema with indexes is known.
    static func referenceFields(_ state: BrowserState) -> (asked: [ReferenceField], notQueryable: [String])? {
        guard let known = state.schema, known.indexesKnown else { return nil }
        var asked: [ReferenceField] = [], notQueryable: [String] = []
        for type in known.schema.recordTypes.sorted(by: { $0.name < $1.name }) {
            for field in type.fields.sorted(by: { $0.name < $1.name }) where !field.isSystem {
                let isList: Bool
                switch field.type {
                case .primitive(.reference): isList = false
                case .list(.primitive(.reference)): isList = true
                default: continue
                }
                let f = ReferenceField(recordType: type.name, field: field.name, isList: isList)
                if field.indexes.contains(.queryable) { asked.append(f) } else { notQueryable.append(f.label) }
            }
        }
        return (asked, notQueryable)
    }

    /// Staged deletes whose impact is not known yet: marked as being looked for, the cache scan, and
    /// the server's queries where the schema allows them.
    static func deleteImpactChecks(_ state: inout BrowserState) -> [BrowserEffect] {
        let keys = state.staged.operations.filter { $0.kind == .delete && state.known.impacts[$0.key] == nil }.map(\.key)
        guard !keys.isEmpty else { return [] }
        var effects: [BrowserEffect] = [.findReferrers(keys)]
        let fields = referenceFields(state)
        for key in keys {
            var impact = DeleteImpact(referrers: [])
            if let fields {
                impact.notQueryable = keys.count > serverAskLimit ? [] : fields.notQueryable
                impact.server = keys.count > serverAskLimit ? .notAsked("a delete of \(Format.count(keys.count)) records at once")
                    : (fields.asked.isEmpty ? .notAsked("no reference field is QUERYABLE") : .asking(fields.asked))
            } else {
                impact.server = state.schema == nil ? .waitingForSchema : .notAsked("the schema's indexes are not known")
            }
            state.known.impacts[key] = impact
        }
        if let fields, !fields.asked.isEmpty, keys.count <= serverAskLimit {
            effects.append(.countReferrersOnServer(keys, fields: fields.asked))
        }
        return effects
    }

    /// Everything looked up about what is staged: VALIDATE targets and delete impacts.
    static func stagedLookups(_ state: inout BrowserState) -> [BrowserEffect] {
        ChangeWords.checkTargets(&state) + deleteImpactChecks(&state)
    }

    /// The schema has loaded: staged deletes that waited for it are asked about now.
    static func askServerAfterSchema(_ state: inout BrowserState) -> [BrowserEffect] {
        let waiting = state.staged.operations.filter { $0.kind == .delete && state.known.impacts[$0.key]?.server == .waitingForSchema }.map(\.key)
        guard !waiting.isEmpty else { return [] }
        let cached = waiting.map { state.known.impacts[$0]! }
        for key in waiting { state.known.impacts[key] = nil }
        // Asked as if just staged; the cache's part, found already, is kept.
        let effects = deleteImpactChecks(&state).filter { if case .findReferrers = $0 { return false } else { return true } }
        for (key, impact) in zip(waiting, cached) {
            state.known.impacts[key]?.referrers = impact.referrers
            state.known.impacts[key]?.truncatedAt = impact.truncatedAt
            state.known.impacts[key]?.cacheSearched = impact.cacheSearched
        }
        return effects
    }

    /// The cache's part: what the server said (or is being asked) is kept.
    static func referrersFound(_ impacts: [RecordKey: DeleteImpact], _ state: inout BrowserState) {
        for (key, impact) in impacts {
            var merged = impact
            merged.cacheSearched = true
            if let earlier = state.known.impacts[key] {
                merged.server = earlier.server
                merged.notQueryable = earlier.notQueryable
            }
            state.known.impacts[key] = merged
        }
        tellImpact(Array(impacts.keys), &state)
    }

    /// The server's part, merged with the cache's (union by record name and field).
    static func serverReferrersCounted(_ counted: [RecordKey: ServerReferrers], fields: [ReferenceField], _ state: inout BrowserState) {
        for (key, found) in counted {
            var impact = state.known.impacts[key] ?? DeleteImpact(referrers: [])
            impact.server = .counted(fields, found)
            state.known.impacts[key] = impact
        }
        tellImpact(Array(counted.keys), &state)
    }

    /// What a delete just staged does is said at once.
    static func tellImpact(_ keys: [RecordKey], _ state: inout BrowserState) {
        // The cheap test first: looking an operation up walks the batch (10,000 after a bulk d).
        for key in keys.sorted(by: { $0.recordName < $1.recordName }) {
            guard let impact = state.known.impacts[key], !impact.referrers.isEmpty || impact.server.found,
                  !impact.cascade.isEmpty || !impact.blocking.isEmpty, state.staged.operation(for: key)?.kind == .delete else { continue }
            state.say(.deleteImpact(record: key.recordName, impact))
            return
        }
    }
}
