import CloudKitModels
import TerminalUI

/// A container's schema as the browser knows it, and where it came from.
public struct KnownSchema: Sendable, Hashable {
    public enum Origin: Sendable, Hashable {
        /// The server's schema endpoint (`ckbrowse serve`).
        case server
        /// A `.ckdb` file (`:schema load`).
        case file(String)
        /// Inferred from the records in the local cache: types and fields, no indexes or grants.
        case inferred
    }

    public var schema: CloudKitSchema
    public var origin: Origin
    public var environment: CloudKitEnvironment
    /// Records of each type in the local cache, where known.
    public var counts: [String: Int]
    /// Browsing development on a server with a schema endpoint: production's schema too, so a query
    /// that works in development but that production would refuse is pointed out.
    public var production: CloudKitSchema?

    public init(schema: CloudKitSchema, origin: Origin, environment: CloudKitEnvironment, counts: [String: Int] = [:]) {
        self.schema = schema
        self.origin = origin
        self.environment = environment
        self.counts = counts
    }

    /// An inferred schema knows no indexes or grants: nothing is judged from them.
    public var indexesKnown: Bool { origin != .inferred }

    public var source: String {
        switch origin {
        case .server: return "from the server"
        case .file(let path): return "from \(path)"
        case .inferred: return "inferred from the records seen (indexes and grants unknown; :schema load FILE reads a cktool export)"
        }
    }
}

/// One row of the schema screen.
public struct SchemaRow: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case type, field, grants }
    public var kind: Kind
    public var recordType: String
    /// The field's name (field rows).
    public var field: String?
    public var cells: [String]
}

/// Tab on a command line: the line completed as far as it is unambiguous, and the candidates.
public struct Completion: Sendable, Hashable {
    public var text: String
    public var candidates: [String]
}

/// Where a word of a `:query` stands.
enum QueryPart: Hashable {
    case field
    case comparator(field: String)
    /// `typed`: a word of the value is in already (so `and` or `sort` may come).
    case value(typed: Bool)
    case sortField, direction, done
}

/// Completion of `:` commands, `n` (new record) and `a` (add field) lines from the schema.
public enum Completing {
    public static let commands = ["query", "schema", "db", "open", "share", "shares", "accept", "columns", "sort", "set", "export", "q"]

    /// Completes the last word of `text` from `options` (case-insensitive prefix): one match is
    /// completed with a space after it, several to their common prefix; nil when none matches.
    static func word(_ text: String, _ options: [String]) -> Completion? {
        let start = text.lastIndex(of: " ").map { text.index(after: $0) } ?? text.startIndex
        let partial = String(text[start...])
        let matches = options.filter { $0.lowercased().hasPrefix(partial.lowercased()) }
        guard !matches.isEmpty else { return nil }
        let head = String(text[..<start])
        if matches.count == 1 { return Completion(text: head + matches[0] + " ", candidates: []) }
        var common = matches[0]
        for m in matches.dropFirst() {
            while !m.lowercased().hasPrefix(common.lowercased()) { common.removeLast() }
        }
        // Keep what was typed when the common prefix adds nothing (its case included).
        let completed = common.count > partial.count ? common : partial
        return Completion(text: head + completed, candidates: matches)
    }

    /// A `:` line: the command, then for `query` the record type, and in each filter the field and
    /// the comparators its type and indexes allow; `schema` takes `load` and `reload`.
    /// `listTypes`: the record types of the list on screen (`:sort`, `:set` and `:columns` complete their
    /// fields; every type's when empty).
    public static func command(_ text: String, schema: KnownSchema?, listTypes: [String] = []) -> (Completion?, why: String) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let position = text.hasSuffix(" ") || text.isEmpty ? words.count : words.count - 1
        if position == 0 { return (word(text, commands), "no command starts so") }
        switch words[0] {
        case "schema":
            return position == 1 ? (word(text, ["load", "reload"]), ":schema takes load FILE or reload") : (nil, "type the file's path")
        case "query":
            guard let schema else { return (nil, "the schema is not loaded yet (:schema loads it)") }
            let types = schema.schema.recordTypes.map(\.name)
            if position == 1 { return (word(text, types), "no record type starts so (:schema lists them)") }
            guard let type = schema.schema.recordType(words[1]) else { return (nil, "\(words[1]) is not a record type of the schema") }
            let fields = type.fields.filter { !$0.isSystem }.map(\.name).sorted() + IndexRules.systemFields(of: type).map(\.name.rawValue)
            // Where the word being typed stands: FIELD COMPARATOR VALUE… [and …] [sort FIELD [asc|desc]].
            var part = QueryPart.field
            for w in words[2..<position] {
                switch part {
                case .field: part = w.lowercased() == "sort" ? .sortField : .comparator(field: w)
                case .comparator: part = .value(typed: false)
                case .value(let typed):
                    if typed && w.lowercased() == "and" {
                        part = .field
                    } else if typed && w.lowercased() == "sort" {
                        part = .sortField
                    } else if typed && fieldSchema(w, in: type) != nil {
                        part = .comparator(field: w)  // the older form: the next filter without `and`
                    } else {
                        part = .value(typed: true)
                    }
                case .sortField: part = .direction
                case .direction, .done: part = .done
                }
            }
            switch part {
            case .field:
                let first = position == 2
                return (word(text, fields + (first ? ["sort"] : [])), "no field of \(type.name) starts so")
            case .comparator(let name):
                guard let field = fieldSchema(name, in: type) else { return (nil, "\(name) is not a field of \(type.name)") }
                let valid = IndexRules.comparators(for: field, indexesKnown: schema.indexesKnown).map(\.rawValue)
                if valid.isEmpty { return (nil, "\(name) (\(field.type)) has no index a filter can use in \(schema.environment.rawValue)") }
                return (word(text, valid), "no comparator of \(name) (\(field.type)) starts so")
            case .value(false): return (nil, "type the value (\"…\" keeps spaces, and, sort in it)")
            case .value(true): return (word(text, ["and", "sort"] + fields), "the value goes on; and adds a filter, sort orders")
            case .sortField:
                let sortable = type.fields.filter { !$0.isSystem && (!schema.indexesKnown || $0.indexes.contains(.sortable)) }.map(\.name).sorted()
                    + IndexRules.systemFields(of: type).filter { !schema.indexesKnown || $0.field.indexes.contains(.sortable) }.map(\.name.rawValue)
                return (word(text, sortable.filter { !$0.isEmpty }), sortable.isEmpty ? "no field of \(type.name) is SORTABLE" : "no SORTABLE field of \(type.name) starts so")
            case .direction: return (word(text, ["asc", "desc"]), "asc or desc")
            case .done: return (nil, "the query is complete: Enter runs it")
            }
        case "db":
            return position == 1 ? (word(text, ["public", "private", "shared"]), ":db takes public, private or shared") : (nil, ":db takes one database")
        case "sort", "set", "columns":
            guard let schema else { return (nil, "the schema is not loaded yet (:schema loads it)") }
            let types = listTypes.isEmpty ? schema.schema.recordTypes : listTypes.compactMap { schema.schema.recordType($0) }
            let fields = Set(types.flatMap { $0.fields.filter { !$0.isSystem }.map(\.name) }).sorted()
            switch (words[0], position) {
            case ("sort", 2): return (word(text, ["asc", "desc"]), "asc or desc")
            case ("sort", 1), ("set", 1), ("columns", _):
                return (word(text, fields), fields.isEmpty ? "the schema has no fields for these records" : "no field starts so")
            case ("set", _): return (nil, "type the value (typed as the field's type)")
            default: return (nil, ":sort FIELD [asc|desc]")
            }
        default:
            return (nil, "nothing to complete here")
        }
    }

    /// A field of the type by the name a query uses (system fields by their `systemFieldName`).
    static func fieldSchema(_ name: String, in type: RecordTypeSchema) -> FieldSchema? {
        if let system = IndexRules.systemFields(of: type).first(where: { $0.name.rawValue == name }) { return system.field }
        return type.field(name)
    }
}

extension Browser {
    /// `:schema` opens the schema screen (loading it the first time); `:schema reload` asks again;
    /// `:schema load FILE` reads a `.ckdb` file.
    static func schemaCommand(_ words: [String], _ state: inout BrowserState) -> [BrowserEffect] {
        switch words.first {
        case nil:
            pushSchemaPane(&state)
            if state.schema == nil || state.schema?.origin == .inferred { return loadSchema(&state) }
            return []
        case "reload":
            pushSchemaPane(&state)
            return loadSchema(&state)
        case "load":
            guard words.count >= 2 else {
                fail(&state, BrowserFailure(message: ":schema load FILE reads a .ckdb file (e.g. cktool export-schema's)"))
                return []
            }
            pushSchemaPane(&state)
            state.schemaLoading = true
            // The file is the user's choice: the start's load of the server's schema is not made after it.
            state.known.schemaAfterZones = false
            let path = words.dropFirst().joined(separator: " ")
            state.known.schemaFileLoading = path
            state.say(.checkingPath(path))
            return [.loadSchemaFile(path)]
        default:
            fail(&state, BrowserFailure(message: ":schema, :schema reload or :schema load FILE"))
            return []
        }
    }

    static func pushSchemaPane(_ state: inout BrowserState) {
        state.stack.open(.schema)
    }

    static func loadSchema(_ state: inout BrowserState) -> [BrowserEffect] {
        state.schemaLoading = true
        state.known.schemaAfterZones = false
        return [.loadSchema]
    }

    static func schemaLoaded(_ result: Result<KnownSchema, BrowserFailure>, _ state: inout BrowserState) {
        state.schemaLoading = false
        let file = state.known.schemaFileLoading
        state.known.schemaFileLoading = nil
        switch result {
        case .success(let known):
            // A file loaded by hand is not replaced by a later inference.
            if known.origin == .inferred, case .file? = state.schema?.origin { return }
            state.schema = known
            state.setSelection(.schema, min(state.position(.schema).selection, max(0, schemaRows(state).count - 1)))
            if state.pane == .schema {
                switch known.origin {
                case .file(let path): state.say(.schemaRead(path: path, recordTypes: known.schema.recordTypes.count))
                case .inferred: state.say(.schemaInferred(source: known.source))
                case .server: break
                }
            }
        case .failure(let failure):
            fail(&state, failure)
            // A file that does not parse (or cannot be read): the line it was asked with opens again,
            // its reason above it, in full ("checking FILE…" stayed, the reason cut in the status bar).
            if let file {
                reopen(.command, text: "schema load " + file, refusal: .failed(failure), &state)
            }
        }
    }

    /// Each record type, its fields (name, type, indexes) and its grants.
    static func schemaRows(_ state: BrowserState) -> [SchemaRow] {
        guard let known = state.schema else { return [] }
        var rows: [SchemaRow] = []
        for type in known.schema.recordTypes.sorted(by: { $0.name < $1.name }) {
            let count = known.counts[type.name].map { "\(Format.count($0)) cached" } ?? ""
            rows.append(SchemaRow(kind: .type, recordType: type.name, cells: [type.name, "", "", count]))
            let fields = type.fields.filter { !$0.isSystem || !$0.indexes.isEmpty }.sorted { $0.name < $1.name }
            for field in fields {
                let indexes = known.indexesKnown ? (field.indexes.isEmpty ? "none" : field.indexes.sorted().map(\.rawValue).joined(separator: " ")) : "?"
                rows.append(SchemaRow(kind: .field, recordType: type.name, field: field.name, cells: ["  " + field.name, field.type.description, indexes, ""]))
            }
            if known.indexesKnown {
                let grants = type.grants.sorted { $0.role < $1.role }.map { grant in
                    SchemaGrant.Permission.allCases.filter(grant.permissions.contains).map(\.rawValue).joined(separator: ",") + " " + grant.role
                }
                rows.append(SchemaRow(kind: .grants, recordType: type.name, cells: ["  grants", grants.isEmpty ? "none (unusable in the public database)" : grants.joined(separator: " · "), "", ""]))
            }
        }
        return rows
    }

    /// The schema screen's keys: move; Enter on a type queries it, on a field starts a `:query`
    /// filter on it; r reloads.
    static func schemaKey(_ key: Key, _ state: inout BrowserState) -> [BrowserEffect] {
        let rows = schemaRows(state)
        let h = listHeight(state)
        if state.withPosition(.schema, { moveList(key, &$0, &$1, count: rows.count, height: h) }) { return [] }
        switch key {
        case .char("r"): return loadSchema(&state)
        case .enter, .char("l"), .right:
            guard rows.indices.contains(state.position(.schema).selection) else { return [] }
            let row = rows[state.position(.schema).selection]
            if let field = row.field {
                let name = field.hasPrefix("___") ? (SystemFieldName(named: field)?.rawValue ?? field) : field
                var line = InputLine(.command, text: "query \(row.recordType) \(name) ")
                if let known = state.schema, let type = known.schema.recordType(row.recordType), let schema = Completing.fieldSchema(name, in: type) {
                    let valid = IndexRules.comparators(for: schema, indexesKnown: known.indexesKnown).map(\.rawValue)
                    line.hint = valid.isEmpty ? "\(name) has no index a filter can use" : "comparators: " + valid.joined(separator: " ")
                }
                state.input = line
                return []
            }
            guard state.recordsScreen != nil || !state.zones.isEmpty else { return [] }
            return command("query \(row.recordType)", &state)
        default: return []
        }
    }

    /// What the schema says CloudKit will answer to `query`, or nil when it would run it (or the
    /// schema cannot tell: inferred, or not loaded).
    static func schemaWarning(_ query: Query, _ state: BrowserState) -> String? {
        guard let known = state.schema, known.indexesKnown else { return nil }
        guard let type = known.schema.recordType(query.recordType) else {
            return "Did not find record type: \(query.recordType) (\(known.environment.rawValue) schema, \(known.source))"
        }
        if let violation = IndexRules.violation(of: query, in: type) {
            return "\(violation.reason) in \(known.environment.rawValue) (schema \(known.source))"
        }
        if let mismatch = FilterTypes.problem(of: query, in: type) { return "\(mismatch) (schema \(known.source))" }
        return nil
    }

    /// Browsing development: what production's schema says CloudKit would answer there, for a type
    /// that production has (one not deployed yet is not a mistake of the query).
    static func productionWarning(_ query: Query, _ state: BrowserState) -> String? {
        guard let known = state.schema, known.environment == .development, let type = known.production?.recordType(query.recordType),
            let violation = IndexRules.violation(of: query, in: type)
        else { return nil }
        return violation.reason
    }

    /// The files listed for Tab in a file prompt: the line is completed as far as they agree (a
    /// single one whole), and the candidates stand above it. Ignored when the line changed meanwhile.
    static func pathsListed(typed: String, _ paths: [String], _ state: inout BrowserState) {
        guard var input = state.input, input.text == typed else { return }
        switch input.mode {
        case .assetFile, .saveAsset: break
        default: return
        }
        if paths.isEmpty {
            input.hint = "no file or directory starts so"
        } else {
            var common = paths[0]
            for path in paths.dropFirst() { while !path.hasPrefix(common) { common.removeLast() } }
            if common.count > typed.count {
                input.characters = Array(common)
                input.cursor = input.characters.count
            }
            // The names alone: the directory is on the line.
            input.hint = paths.count == 1 ? nil : paths.map { path in
                let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
                let name = trimmed.split(separator: "/").last.map(String.init) ?? trimmed
                return name + (path.hasSuffix("/") ? "/" : "")
            }.joined(separator: "  ")
        }
        input.refusal = nil
        state.input = input
    }

    /// The schema's record types a user may create with `n`, sorted (not Users, not shares: the server
    /// makes those).
    static func creatableTypes(_ state: BrowserState) -> [String] {
        (state.schema?.schema.recordTypes.map(\.name) ?? []).filter { $0 != "Users" && $0 != Record.shareRecordType }.sorted()
    }

    /// Tab in an input line: completes from the schema (and the commands), showing the candidates.
    static func tabComplete(_ input: inout InputLine, _ state: inout BrowserState) -> [BrowserEffect] {
        var effects: [BrowserEffect] = []
        if state.schema == nil && !state.schemaLoading { effects = loadSchema(&state) }
        let text = input.text
        let result: (Completion?, why: String)
        switch input.mode {
        case .command:
            result = Completing.command(text, schema: state.schema, listTypes: state.pane == .records ? Array(Set(state.recordsScreen?.list.window.compactMap(\.recordType) ?? [])).sorted() : [])
        case .newRecord(let here, let schema):
            let all = Array(Set(creatableTypes(state) + here + schema)).sorted()
            result = text.contains(" ") ? (nil, "type the record's name, or leave it out") : (Completing.word(text, all), "no record type starts so")
        case .addField:
            guard let recordType = state.detailScreen?.detail.record?.recordType, let type = state.schema?.schema.recordType(recordType) else {
                result = (nil, state.schema == nil ? "the schema is not loaded yet" : "the schema has no fields for this type")
                break
            }
            let present = Set(state.detailScreen?.detail.record?.fields.keys.map { $0 } ?? [])
            let free = type.fields.filter { !$0.isSystem && !present.contains($0.name) }
            if !text.contains(" "), let done = Completing.word(text, free.map(\.name)) {
                // One field: its type follows, as the schema has it.
                if done.candidates.isEmpty, let field = type.field(String(done.text.dropLast())) {
                    result = (Completion(text: done.text + field.type.wireType, candidates: []), "")
                } else {
                    result = (done, "")
                }
            } else {
                result = (nil, free.isEmpty ? "every field of \(recordType) is set" : "no field of \(recordType) starts so")
            }
        case .assetFile, .saveAsset:
            // The files are the runtime's to list: the answer completes the line (`pathsListed`).
            input.hint = nil
            return effects + [.listPaths(text)]
        case .queryZone(_, let zones):
            result = (Completing.word(text, zones).map { Completion(text: $0.text.trimmingWhitespace(), candidates: $0.candidates) }, "no zone starts so")
        case .newSubscription:
            let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            let position = text.hasSuffix(" ") || text.isEmpty ? words.count : words.count - 1
            let zones = state.zones.compactMap { $0.zone?.zoneID.zoneName }
            switch (position, words.first) {
            case (0, _): result = (Completing.word(text, ["query", "zone", "database"]), "a subscription is query, zone or database")
            case (1, "query"?):
                let types = Set(creatableTypes(state) + state.subscriptions.compactMap { $0.subscription?.query?.recordType })
                result = (Completing.word(text, types.sorted()), state.schema == nil ? "the schema is not loaded yet" : "no record type starts so")
            case (1, "zone"?), (2, "query"?): result = (Completing.word(text, zones), zones.isEmpty ? "no zone is known yet (z lists them)" : "no zone starts so")
            default: result = (nil, "Enter opens the editor")
            }
        default:
            result = (nil, "nothing to complete here")
        }
        if let completion = result.0 {
            input.characters = Array(completion.text)
            input.cursor = input.characters.count
            input.hint = completion.candidates.isEmpty ? nil : completion.candidates.joined(separator: "  ")
        } else {
            input.hint = state.schema == nil && state.schemaLoading ? "loading the schema… Tab again in a moment" : result.why
        }
        return effects
    }
}
