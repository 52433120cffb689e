import CloudKitModels

extension Browser {
    /// `:` commands. `:query TYPE [FIELD COMPARATOR VALUE]...`, `:db public|private|shared`,
    /// `:open RECORD_NAME`, `:q`.
    static func command(_ text: String, _ state: inout BrowserState) -> [BrowserEffect] {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let verb = words.first else { return [] }
        switch verb {
        case "q", "quit":
            state.quitRequested = true
            return [.quit]
        case "db", "database":
            guard words.count == 2, let scope = DatabaseScope(rawValue: words[1]) else {
                refuse(":db takes public, private or shared", &state)
                return []
            }
            return switchDatabase(scope, &state)
        case "open":
            guard words.count == 2, let zone = state.list?.zone else {
                refuse(":open takes a record name (open a zone first)", &state)
                return []
            }
            return openRecord(RecordKey(zone: zone, recordName: words[1]), &state)
        case "query":
            do {
                let query = try parseQuery(Array(words.dropFirst()))
                guard let zoneID = queryZone(state) else {
                    // Not in a zone (the schema, the subscriptions…): which one is asked, never guessed.
                    let names = state.zones.compactMap { $0.zone?.zoneID.zoneName }
                    guard !names.isEmpty else {
                        refuse("no zone is known yet to run the query in (z lists the zones)", &state)
                        return []
                    }
                    state.input = InputLine(.queryZone(command: text, zones: names))
                    return []
                }
                return startQuery(text, query, in: zoneID, &state)
            } catch let failure as BrowserFailure {
                refuse(failure.message, &state)
                return []
            } catch {
                return []
            }
        case "accept":
            // A share URL (…/share/<shortGUID>) or the shortGUID itself.
            guard words.count == 2, let guid = words[1].split(separator: "/").last.map(String.init), !guid.isEmpty else {
                refuse(":accept takes a share URL or its shortGUID", &state)
                return []
            }
            state.message = "accepting the share \(guid)…"
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
        default:
            refuse("unknown command ':\(verb)' (try :query, :schema, :db, :open, :share, :shares, :accept, :columns, :sort, :q; Tab completes)", &state)
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
        if let note = productionWarning(query, state) { state.message = note }
        return effects
    }

    /// `TYPE [FIELD COMPARATOR VALUE]...` → a query. Values: integers as INT64, other numbers as
    /// DOUBLE, `a,b,c` as a list for IN/NOT_IN/LIST_CONTAINS_*, anything else as STRING.
    public static func parseQuery(_ words: [String]) throws -> Query {
        guard let type = words.first else { throw BrowserFailure(message: "usage: :query TYPE [FIELD COMPARATOR VALUE]") }
        var filters: [Filter] = []
        var rest = words.dropFirst()
        while !rest.isEmpty {
            guard rest.count >= 3 else { throw BrowserFailure(message: "a filter is FIELD COMPARATOR VALUE") }
            let field = rest.removeFirst()
            let comparator = Comparator(rawValue: rest.removeFirst().uppercased())
            guard Comparator.all.contains(comparator) else {
                throw BrowserFailure(message: "unknown comparator '\(comparator.rawValue)'; valid: \(Comparator.all.map(\.rawValue).joined(separator: ", "))")
            }
            var valueWords: [String] = []
            while let next = rest.first, !(rest.count >= 3 && Comparator.all.contains(Comparator(rawValue: rest.dropFirst().first!.uppercased())) && !valueWords.isEmpty) {
                valueWords.append(next)
                rest.removeFirst()
                if rest.count < 3 { continue }
            }
            let valueText = valueWords.joined(separator: " ")
            let value: FieldValue
            if comparator.takesListValue {
                let items = valueText.split(separator: ",").map { String($0).trimmingWhitespace() }
                if items.allSatisfy({ Int64($0) != nil }) { value = .int64List(items.compactMap { Int64($0) }) } else { value = .stringList(items) }
            } else if let i = Int64(valueText) {
                value = .int64(i)
            } else if let d = Double(valueText), valueText.contains(".") {
                value = .double(d)
            } else {
                value = .string(valueText)
            }
            if let system = SystemFieldName.all.first(where: { $0.rawValue == field }) {
                let systemValue: FieldValue
                switch value {
                case .string(let s) where [.recordName, .createdUserRecordName, .modifiedUserRecordName, .parent, .share].contains(system):
                    systemValue = .reference(Reference(recordName: s, action: nil))
                case .int64(let i) where system == .createdTimestamp || system == .modifiedTimestamp:
                    systemValue = .timestamp(i)
                default: systemValue = value
                }
                filters.append(Filter(system: system, comparator, systemValue))
            } else {
                filters.append(Filter(field, comparator, value))
            }
        }
        return Query(recordType: type, filterBy: filters.isEmpty ? nil : filters)
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
        guard var list = state.list, state.pane == .records || state.pane == .recordDetail else {
            refuse(":columns works on a records list: open a zone first", &state)
            return []
        }
        let names = words.joined(separator: ",").split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
        if let bad = names.first(where: { !FieldNames.isValid($0) }) {
            refuse("'\(bad)' is not a field name (a letter, then letters, digits or _)", &state)
            return []
        }
        guard let type = list.row(list.selection)?.recordType ?? list.window.first(where: { $0.recordType != nil })?.recordType else {
            refuse(":columns needs a record to take the record type from", &state)
            return []
        }
        list.view.columns = names.isEmpty ? nil : names
        list.seenWidths = []
        state.list = list
        state.message = names.isEmpty ? "columns of \(type): back to the default" : "columns of \(type): \(names.joined(separator: ", ")) (remembered)"
        return [.rememberColumns(recordType: type, columns: names)] + window(&state, force: true)
    }

    /// `:sort FIELD [asc|desc]` orders the loaded rows by a field (on a query: the query's sortBy,
    /// asked of the server again); `:sort` alone goes back to the fetched order.
    static func sortCommand(_ words: [String], _ state: inout BrowserState) -> [BrowserEffect] {
        guard var list = state.list else {
            refuse(":sort works on a records list: open a zone first", &state)
            return []
        }
        var sort: ListSort?
        if let field = words.first {
            guard FieldNames.isValid(field) else {
                refuse("'\(field)' is not a field name", &state)
                return []
            }
            let direction = words.dropFirst().first?.lowercased() ?? "asc"
            guard ["asc", "desc", "ascending", "descending"].contains(direction) else {
                refuse(":sort FIELD [asc|desc]", &state)
                return []
            }
            sort = ListSort(field: field, descending: direction.hasPrefix("desc"))
        }
        if case .query(var request) = list.source {
            request.query.sortBy = sort.map { [SortDescriptor($0.field, ascending: !$0.descending)] }
            request.continuationMarker = nil
            return rerunQuery(request, &state)
        }
        list.view.sort = sort
        list.selection = 0
        list.scroll = 0
        if let field = sort?.field, !(list.view.columns ?? []).contains(field) {
            list.view.columns = (list.view.columns ?? []) + [field]  // the sorted field is shown
            list.seenWidths = []
        }
        state.list = list
        state.message = sort.map { "sorted by \($0.field) \($0.descending ? "descending" : "ascending") (the loaded rows)" } ?? "back to the fetched order"
        return window(&state, force: true)
    }
}
