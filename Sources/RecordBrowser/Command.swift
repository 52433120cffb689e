import CloudKitModels

extension Browser {
    /// `:` commands. `:query TYPE [FIELD COMPARATOR VALUE]...`, `:db public|private|shared`,
    /// `:open RECORD_NAME`, `:q`.
    static func command(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let verb = words.first else { return [] }
        switch verb {
        case "q", "quit":
            // `:q extra` is a mistyped line, not a quit: a quit throws nothing staged away, but a typo
            // should not end the session.
            guard words.count == 1 else {
                refuse(.takesNoArguments(verb), &state)
                return []
            }
            state.quitRequested = true
            return [.quit]
        case "db", "database":
            guard words.count == 2, let scope = DatabaseScope(rawValue: words[1]) else {
                refuse(.dbUsage, &state)
                return []
            }
            return switchDatabase(scope, &state)
        case "open":
            guard words.count == 2 else {
                refuse(.openUsage, &state)
                return []
            }
            // In the zone on screen, or the one selected on the zones screen (as :query runs).
            guard let zone = queryZone(state).map({ state.connection.zone($0) }) ?? state.recordsScreen?.list.zone else {
                refuse(.openNeedsZone, &state)
                return []
            }
            return openRecord(RecordKey(zone: zone, recordName: words[1]), &state)
        case "query":
            do {
                let query = try parseQuery(Array(words.dropFirst()), schema: state.schema)
                guard let zoneID = queryZone(state) else {
                    // Not in a zone (the schema, the subscriptions…): which one is asked, never guessed.
                    let names = state.zones.compactMap { $0.zone?.zoneID.zoneName }
                    guard !names.isEmpty else {
                        refuse(.noZoneForQuery, &state)
                        return []
                    }
                    state.input = InputLine(.queryZone(command: text, zones: names))
                    return []
                }
                return startQuery(text, query, in: zoneID, &state)
            } catch let failure as BrowserFailure {
                refuse(.failed(failure), &state)
                return []
            } catch {
                return []
            }
        case "accept":
            // A share URL (…/share/<shortGUID>) or the shortGUID itself.
            guard words.count == 2, let guid = words[1].split(separator: "/").last.map(String.init), !guid.isEmpty else {
                refuse(.acceptUsage, &state)
                return []
            }
            state.say(.acceptingShare(guid))
            return [.acceptShare(guid)]
        case "share":
            return shareCommand(&state)
        case "shares":
            return openShares(&state)
        case "schema":
            return schemaCommand(Array(words.dropFirst()), &state)
        case "columns", "cols":
            return columnsCommand(Array(words.dropFirst()), &state)
        case "sort":
            return sortCommand(Array(words.dropFirst()), &state)
        case "set":
            return setCommand(text, &state)
        case "export":
            return exportCommand(text, &state)
        default:
            refuse(.unknownCommand(verb), &state)
            return []
        }
    }

    /// A parsed `:query` in its zone: questioned first when the schema says CloudKit will refuse it.
    static func startQuery(_ text: String, _ query: Query, in zoneID: ZoneID, _ state: inout BrowserState) -> [BrowserEffect] {
        if let warning = schemaWarning(query, state) {
            state.confirmation = .refusedQuery(text: text, zone: zoneID, reason: warning)
            return []
        }
        let effects = runQuery(QueryRequest(query: query), in: zoneID, text: text, &state)
        if let reason = productionWarning(query, state) { state.say(.productionWillRefuse(reason: reason)) }
        return effects
    }

    /// `TYPE [FIELD COMPARATOR VALUE [and FIELD COMPARATOR VALUE]...] [sort FIELD [asc|desc] [, FIELD …]]`
    /// → a query. Values: integers as INT64, other numbers as DOUBLE, `a,b,c` as a list for
    /// IN/NOT_IN/LIST_CONTAINS_*, `"…"` as a STRING whatever it holds (`and` and `sort` included),
    /// anything else as STRING. Filters may also follow each other without `and`.
    /// `schema`: when known, an unknown comparator's refusal lists those the field's type and indexes
    /// allow (all 21 were listed, and cut at 80 columns).
    public static func parseQuery(_ words: [String], schema: KnownSchema? = nil) throws -> Query {
        let usage = "usage: :query TYPE [FIELD COMPARATOR VALUE [and FIELD COMPARATOR VALUE]…] [sort FIELD [asc|desc]]"
        let tokens = QueryTokens.split(words.joined(separator: " "))
        guard let type = tokens.first, !type.quoted else { throw BrowserFailure(message: usage) }
        var filters: [Filter] = []
        var sorts: [SortDescriptor] = []
        var rest = tokens.dropFirst()
        func isKeyword(_ token: QueryTokens.Token?, _ word: String) -> Bool { token.map { !$0.quoted && $0.text.lowercased() == word } ?? false }
        func isComparator(_ token: QueryTokens.Token?) -> Bool { token.map { !$0.quoted && Comparator.all.contains(Comparator(rawValue: $0.text.uppercased())) } ?? false }
        while let first = rest.first, !isKeyword(first, "sort") {
            if isKeyword(first, "and") {
                guard !filters.isEmpty else { throw BrowserFailure(message: "'and' joins two filters: \(usage)") }
                rest.removeFirst()
            }
            guard rest.count >= 3, !isKeyword(rest.first, "sort") else { throw BrowserFailure(message: "a filter is FIELD COMPARATOR VALUE") }
            let field = rest.removeFirst().text
            let comparatorWord = rest.removeFirst().text
            let comparator = Comparator(rawValue: comparatorWord.uppercased())
            guard Comparator.all.contains(comparator) else {
                if let schema, let fieldSchema = schema.schema.recordType(type.text)?.field(field) {
                    let allowed = IndexRules.comparators(for: fieldSchema, indexesKnown: schema.indexesKnown)
                    throw BrowserFailure(message: "unknown comparator '\(comparatorWord)'; \(field) takes " + (allowed.isEmpty
                        ? "none (no QUERYABLE index)" : allowed.map(\.rawValue).joined(separator: ", ")))
                }
                throw BrowserFailure(message: "unknown comparator '\(comparatorWord)'; valid: \(Comparator.all.map(\.rawValue).joined(separator: ", "))")
            }
            var valueTokens: [QueryTokens.Token] = []
            // The value runs to `and`, `sort`, or (the older form) the next FIELD COMPARATOR.
            while let next = rest.first {
                if !valueTokens.isEmpty && (isKeyword(next, "and") || isKeyword(next, "sort")) { break }
                if !valueTokens.isEmpty && rest.count >= 3 && isComparator(rest.dropFirst().first) { break }
                valueTokens.append(next)
                rest.removeFirst()
            }
            guard !valueTokens.isEmpty else { throw BrowserFailure(message: "\(field) \(comparator.rawValue) needs a value") }
            filters.append(filter(field, comparator, valueTokens))
        }
        if isKeyword(rest.first, "sort") {
            rest.removeFirst()
            let clauses = rest.map(\.text).joined(separator: " ").split(separator: ",").map { $0.split(separator: " ").map(String.init) }
            for clause in clauses {
                guard let field = clause.first, clause.count <= 2, FieldNames.isValid(field) || SystemFieldName(named: field) != nil else {
                    throw BrowserFailure(message: "sort FIELD [asc|desc]: \(usage)")
                }
                let direction = clause.count == 2 ? clause[1].lowercased() : "asc"
                guard ["asc", "desc", "ascending", "descending"].contains(direction) else { throw BrowserFailure(message: "sort FIELD asc or sort FIELD desc, not '\(clause[1])'") }
                if let system = SystemFieldName(named: field) {
                    sorts.append(SortDescriptor(system: system, ascending: !direction.hasPrefix("desc")))
                } else {
                    sorts.append(SortDescriptor(field, ascending: !direction.hasPrefix("desc")))
                }
            }
            guard !sorts.isEmpty else { throw BrowserFailure(message: "sort needs a field: \(usage)") }
        }
        return Query(recordType: type.text, filterBy: filters.isEmpty ? nil : filters, sortBy: sorts.isEmpty ? nil : sorts)
    }

    static func filter(_ field: String, _ comparator: Comparator, _ tokens: [QueryTokens.Token]) -> Filter {
        let valueText = tokens.map(\.text).joined(separator: " ")
        let quoted = tokens.count == 1 && tokens[0].quoted
        let value: FieldValue
        if comparator.takesListValue {
            let items = valueText.split(separator: ",").map { String($0).trimmingWhitespace() }
            if !quoted, items.allSatisfy({ Int64($0) != nil }) { value = .int64List(items.compactMap { Int64($0) }) } else { value = .stringList(items) }
        } else if !quoted, let i = Int64(valueText) {
            value = .int64(i)
        } else if !quoted, let d = Double(valueText), valueText.contains(".") {
            value = .double(d)
        } else {
            value = .string(valueText)
        }
        guard let system = SystemFieldName(named: field) else { return Filter(field, comparator, value) }
        let systemValue: FieldValue
        switch value {
        case .string(let s) where [.recordName, .createdUserRecordName, .modifiedUserRecordName, .parent, .share].contains(system):
            systemValue = .reference(Reference(recordName: s, action: nil))
        case .int64(let i) where system == .createdTimestamp || system == .modifiedTimestamp:
            systemValue = .timestamp(i)
        default: systemValue = value
        }
        return Filter(system: system, comparator, systemValue)
    }
}

/// The words of a `:query`: split at spaces, except inside double quotes (`"Tom and Jerry"` is one
/// quoted word; `\"` is a quote inside one).
enum QueryTokens {
    struct Token: Hashable {
        var text: String
        var quoted: Bool
    }

    static func split(_ text: String) -> [Token] {
        var tokens: [Token] = []
        var current = "", quoted = false, inQuotes = false, escaped = false
        for c in text {
            if inQuotes {
                if escaped { current.append(c); escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inQuotes = false } else { current.append(c) }
            } else if c == "\"" && current.isEmpty {
                inQuotes = true
                quoted = true
            } else if c == " " {
                if !current.isEmpty || quoted { tokens.append(Token(text: current, quoted: quoted)) }
                current = ""
                quoted = false
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty || quoted { tokens.append(Token(text: current, quoted: quoted)) }
        return tokens
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}

extension Browser {
    /// `:columns a,b` shows fields a and b as columns for the selected record's type (remembered for
    /// that type on this account); `:columns` alone goes back to the default (the STRING field most records hold).
    static func columnsCommand(_ words: [String], _ state: inout BrowserState) -> [BrowserEffect] {
        guard let list = state.recordsScreen?.list, state.pane == .records || state.pane == .recordDetail else {
            refuse(.needsRecordsList(":columns"), &state)
            return []
        }
        let names = words.joined(separator: ",").split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
        if let bad = names.first(where: { !FieldNames.isValid($0) }) {
            refuse(.invalidFieldName(bad), &state)
            return []
        }
        guard let type = list.row(list.selection)?.recordType ?? list.window.first(where: { $0.recordType != nil })?.recordType else {
            refuse(.columnsNeedRecord, &state)
            return []
        }
        state.say(.columns(type: type, names))
        let window: [BrowserEffect] = state.withRecords { screen, state in
            screen.list.view.columns = names.isEmpty ? nil : names
            screen.list.seenWidths = []
            return Browser.window(&screen, state, force: true)
        } ?? []
        return [.rememberColumns(recordType: type, columns: names)] + window
    }

    /// `:sort FIELD [asc|desc]` orders the loaded rows by a field (on a query: the query's sortBy,
    /// asked of the server again); `:sort` alone goes back to the fetched order.
    static func sortCommand(_ words: [String], _ state: inout BrowserState) -> [BrowserEffect] {
        guard let list = state.recordsScreen?.list else {
            refuse(.needsRecordsList(":sort"), &state)
            return []
        }
        var sort: ListSort?
        if let field = words.first {
            guard FieldNames.isValid(field) else {
                refuse(.notAFieldName(field), &state)
                return []
            }
            // A field no type on screen has (the schema says) would sort nothing and show an empty column.
            let types = Set(list.window.compactMap(\.recordType)).sorted()
            if let schema = state.schema?.schema, !types.isEmpty, !types.contains(where: { schema.recordType($0)?.field(field) != nil }) {
                refuse(.noSuchField(field, types: types), &state)
                return []
            }
            let direction = words.dropFirst().first?.lowercased() ?? "asc"
            guard ["asc", "desc", "ascending", "descending"].contains(direction) else {
                refuse(.sortUsage, &state)
                return []
            }
            sort = ListSort(field: field, descending: direction.hasPrefix("desc"))
        }
        if case .query(var request) = list.source {
            request.query.sortBy = sort.map { [SortDescriptor($0.field, ascending: !$0.descending)] }
            request.continuationMarker = nil
            return rerunQuery(request, &state)
        }
        state.say(.sorted(sort))
        return state.withRecords { screen, state in
            screen.list.view.sort = sort
            screen.list.selection = 0
            screen.list.scroll = 0
            if let field = sort?.field, !(screen.list.view.columns ?? []).contains(field) {
                screen.list.view.columns = (screen.list.view.columns ?? []) + [field]  // the sorted field is shown
                screen.list.seenWidths = []
            }
            return window(&screen, state, force: true)
        } ?? []
    }
}
