/// Reads and writes the CloudKit Schema Language (`.ckdb`), as cktool exports and imports it
/// (`../shared/cloudkit-schema.md` §1.2 grammar, §1.7 canonical form, §1.9 validation).
public enum SchemaLanguage {
    /// A syntax or validation error, with the line and column (1-based) where it was found.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var message: String
        public var description: String { "line \(line):\(column): \(message)" }
    }

    // MARK: Reading

    /// Parses and validates a whole file.
    public static func parse(_ text: String) throws(ParseError) -> CloudKitSchema {
        var parser = Parser(tokens: try tokenize(text))
        let schema = try parser.schema()
        try validate(schema, positions: parser.positions)
        return schema
    }

    /// A field type as the language writes it (`LIST<STRING>`, `ENCRYPTED BYTES`), nil if it is not one.
    public static func fieldType(_ text: String) -> SchemaFieldType? {
        guard let tokens = try? tokenize(text) else { return nil }
        var parser = Parser(tokens: tokens)
        guard let type = try? parser.fieldType(), parser.current.text.isEmpty else { return nil }
        return type
    }

    enum TokenKind: Equatable { case word, quoted, symbol }

    struct Token {
        var kind: TokenKind
        var text: String
        var line: Int
        var column: Int
    }

    static func tokenize(_ text: String) throws(ParseError) -> [Token] {
        var tokens: [Token] = []
        let chars = Array(text)
        var i = 0, line = 1, column = 1
        func advance(_ n: Int = 1) {
            for _ in 0..<n where i < chars.count {
                if chars[i] == "\n" { line += 1; column = 1 } else { column += 1 }
                i += 1
            }
        }
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace { advance(); continue }
            if c == "/" && i + 1 < chars.count && chars[i + 1] == "/" || c == "-" && i + 1 < chars.count && chars[i + 1] == "-" {
                while i < chars.count && chars[i] != "\n" { advance() }
                continue
            }
            if c == "/" && i + 1 < chars.count && chars[i + 1] == "*" {
                let (l, col) = (line, column)
                advance(2)
                while i < chars.count && !(chars[i] == "*" && i + 1 < chars.count && chars[i + 1] == "/") { advance() }
                guard i < chars.count else { throw ParseError(line: l, column: col, message: "a /* comment is not closed") }
                advance(2)
                continue
            }
            let (l, col) = (line, column)
            if c == "\"" {
                advance()
                var text = ""
                while i < chars.count && chars[i] != "\"" && chars[i] != "\n" { text.append(chars[i]); advance() }
                guard i < chars.count, chars[i] == "\"" else { throw ParseError(line: l, column: col, message: "a quoted name is not closed") }
                advance()
                guard !text.isEmpty else { throw ParseError(line: l, column: col, message: "an empty quoted name") }
                tokens.append(Token(kind: .quoted, text: text, line: l, column: col))
            } else if "(),;<>".contains(c) {
                tokens.append(Token(kind: .symbol, text: String(c), line: l, column: col))
                advance()
            } else if c.isLetter || c == "_" {
                var text = ""
                while i < chars.count && (chars[i].isLetter || chars[i].isNumber || chars[i] == "_") { text.append(chars[i]); advance() }
                tokens.append(Token(kind: .word, text: text, line: l, column: col))
            } else {
                throw ParseError(line: l, column: col, message: "unexpected '\(c)'")
            }
        }
        tokens.append(Token(kind: .symbol, text: "", line: line, column: column))  // end of input
        return tokens
    }

    /// Where each record type and field was declared, for validation errors.
    struct Positions {
        var types: [String: (Int, Int)] = [:]
        var fields: [String: (Int, Int)] = [:]  // "Type.field"
        var grants: [String: (Int, Int)] = [:]  // "Type.role"
    }

    struct Parser {
        var tokens: [Token]
        var index = 0
        var positions = Positions()

        var current: Token { tokens[index] }

        func error(_ message: String, at token: Token? = nil) -> ParseError {
            let t = token ?? current
            return ParseError(line: t.line, column: t.column, message: message)
        }

        /// A keyword: a bare word, matched without regard to case.
        func isKeyword(_ word: String) -> Bool { current.kind == .word && current.text.uppercased() == word }

        mutating func expect(keyword word: String) throws(ParseError) {
            guard isKeyword(word) else { throw error("expected \(word), found \(describe(current))") }
            index += 1
        }

        mutating func expect(symbol: String) throws(ParseError) {
            guard current.kind == .symbol, current.text == symbol else { throw error("expected '\(symbol)', found \(describe(current))") }
            index += 1
        }

        func describe(_ t: Token) -> String {
            switch t.kind {
            case .symbol: return t.text.isEmpty ? "the end of the file" : "'\(t.text)'"
            case .quoted: return "\"\(t.text)\""
            case .word: return "'\(t.text)'"
            }
        }

        static let reserved: Set<String> = ["GRANT", "PREFERRED", "QUERYABLE", "SORTABLE", "SEARCHABLE"]

        /// A name: bare (starting with a letter, not a reserved word) or quoted.
        mutating func identifier(_ what: String) throws(ParseError) -> String {
            let t = current
            switch t.kind {
            case .quoted:
                index += 1
                return t.text
            case .word:
                guard let first = t.text.first, first.isLetter else {
                    throw error("\(what) '\(t.text)' starts with '\(t.text.prefix(1))': quote it (\"\(t.text)\")")
                }
                guard !Self.reserved.contains(t.text.uppercased()) else { throw error("\(what) '\(t.text)' is a reserved word: quote it (\"\(t.text)\")") }
                index += 1
                return t.text
            case .symbol:
                throw error("expected \(what), found \(describe(t))")
            }
        }

        mutating func schema() throws(ParseError) -> CloudKitSchema {
            try expect(keyword: "DEFINE")
            try expect(keyword: "SCHEMA")
            var schema = CloudKitSchema()
            while !(current.kind == .symbol && current.text.isEmpty) {
                if isKeyword("CREATE") {
                    index += 1
                    try expect(keyword: "ROLE")
                    let t = current
                    let role = try identifier("a role name")
                    guard !schema.roles.contains(role), !CloudKitSchema.builtInRoles.contains(role) else { throw error("role \(role) is defined twice", at: t) }
                    schema.roles.append(role)
                } else if isKeyword("RECORD") {
                    index += 1
                    try expect(keyword: "TYPE")
                    schema.recordTypes.append(try recordType())
                } else {
                    throw error("expected CREATE ROLE or RECORD TYPE, found \(describe(current))")
                }
                try expect(symbol: ";")
            }
            return schema
        }

        mutating func recordType() throws(ParseError) -> RecordTypeSchema {
            let start = current
            let name = try identifier("a record type name")
            positions.types[name] = positions.types[name] ?? (start.line, start.column)
            var type = RecordTypeSchema(name: name)
            try expect(symbol: "(")
            if current.kind == .symbol && current.text == ")" { index += 1; return type }
            while true {
                if isKeyword("GRANT") {
                    index += 1
                    var permissions: Set<SchemaGrant.Permission> = []
                    repeat {
                        guard current.kind == .word, let p = SchemaGrant.Permission(rawValue: current.text.uppercased()) else {
                            throw error("expected READ, CREATE or WRITE, found \(describe(current))")
                        }
                        permissions.insert(p)
                        index += 1
                    } while current.kind == .symbol && current.text == "," && tokens[index + 1].kind == .word
                        && SchemaGrant.Permission(rawValue: tokens[index + 1].text.uppercased()) != nil && { index += 1; return true }()
                    try expect(keyword: "TO")
                    let t = current
                    let role = try identifier("a role name")
                    positions.grants["\(name).\(role)"] = (t.line, t.column)
                    if let i = type.grants.firstIndex(where: { $0.role == role }) {
                        type.grants[i].permissions.formUnion(permissions)
                    } else {
                        type.grants.append(SchemaGrant(permissions, to: role))
                    }
                } else {
                    let t = current
                    let field = try identifier("a field name")
                    guard type.field(field) == nil else { throw error("field \(field) is defined twice in \(name)", at: t) }
                    positions.fields["\(name).\(field)"] = (t.line, t.column)
                    let dataType = try fieldType()
                    var indexes: Set<SchemaIndex> = []
                    while current.kind == .word, let option = SchemaIndex(rawValue: current.text.uppercased()) {
                        indexes.insert(option)
                        index += 1
                    }
                    type.fields.append(FieldSchema(name: field, type: dataType, indexes: indexes))
                }
                if current.kind == .symbol && current.text == "," {
                    index += 1
                    if current.kind == .symbol && current.text == ")" { throw error("a ',' before ')'") }
                    continue
                }
                try expect(symbol: ")")
                return type
            }
        }

        mutating func primitive() throws(ParseError) -> SchemaFieldType.Primitive {
            guard current.kind == .word, let p = SchemaFieldType.Primitive(rawValue: current.text.uppercased()) else {
                throw error("expected a type (ASSET, BYTES, DOUBLE, INT64, LOCATION, REFERENCE, STRING, TIMESTAMP), found \(describe(current))")
            }
            index += 1
            return p
        }

        mutating func fieldType() throws(ParseError) -> SchemaFieldType {
            if isKeyword("LIST") {
                index += 1
                try expect(symbol: "<")
                let element = try fieldType()
                if case .list = element { throw error("lists of lists are not a CloudKit type") }
                try expect(symbol: ">")
                return .list(element)
            }
            if isKeyword("ENCRYPTED") {
                index += 1
                let t = current
                let p = try primitive()
                guard [.bytes, .string, .double, .int64, .location, .timestamp].contains(p) else { throw error("ENCRYPTED \(p.rawValue) is not a CloudKit type", at: t) }
                return .encrypted(p)
            }
            if isKeyword("NUMBER") {
                index += 1
                guard isKeyword("PREFERRED") else { return .number(preferred: nil) }
                index += 1
                try expect(keyword: "AS")
                let t = current
                let p = try primitive()
                guard p == .int64 || p == .double else { throw error("NUMBER is PREFERRED AS INT64 or DOUBLE", at: t) }
                return .number(preferred: p)
            }
            return .primitive(try primitive())
        }
    }

    /// The checks of §1.9 that a file can fail on its own (against production: see deployment).
    static func validate(_ schema: CloudKitSchema, positions: Positions) throws(ParseError) {
        func fail(_ key: String?, in table: [String: (Int, Int)], _ message: String) -> ParseError {
            let p = key.flatMap { table[$0] } ?? (1, 1)
            return ParseError(line: p.0, column: p.1, message: message)
        }
        var seen = Set<String>()
        for type in schema.recordTypes {
            guard seen.insert(type.name).inserted else { throw fail(type.name, in: positions.types, "record type \(type.name) is defined twice") }
            for field in type.fields {
                let key = "\(type.name).\(field.name)"
                if field.isSystem {
                    guard let system = CloudKitSchema.systemFields.first(where: { $0.name == field.name }) else {
                        throw fail(key, in: positions.fields, "\(field.name) is not a system field (names starting with ___ are the system's)")
                    }
                    guard system.type == field.type else {
                        throw fail(key, in: positions.fields, "can't change type of system field \(field.name) (it is \(system.type))")
                    }
                }
                let refused = field.indexes.subtracting(field.type.allowedIndexes)
                if let option = refused.sorted().first {
                    throw fail(key, in: positions.fields, "\(option.rawValue) is not allowed on \(field.name) (\(field.type))")
                }
            }
            for grant in type.grants where !CloudKitSchema.builtInRoles.contains(grant.role) && !schema.roles.contains(grant.role) {
                throw fail("\(type.name).\(grant.role)", in: positions.grants, "GRANT to \(grant.role), a role neither built in nor created (CREATE ROLE \(grant.role);)")
            }
        }
    }

    // MARK: Writing

    /// The canonical form cktool exports (§1.7): roles, then record types by name; in each, fields
    /// by name (every system field listed), names in a column, then one GRANT per role.
    public static func write(_ schema: CloudKitSchema) -> String {
        var out = "DEFINE SCHEMA\n"
        if !schema.roles.isEmpty {
            out += "\n"
            for role in schema.roles.sorted() { out += "    CREATE ROLE \(name(role));\n" }
        }
        for type in schema.recordTypes.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            var fields = type.fields
            for system in CloudKitSchema.systemFields where !fields.contains(where: { $0.name == system.name }) {
                fields.append(FieldSchema(name: system.name, type: system.type))
            }
            fields.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            let width = (fields.map { name($0.name).count }.max() ?? 0) + 1
            var elements: [String] = fields.map { field in
                let padded = name(field.name).padded(toLength: width)
                let options = field.indexes.sorted().map(\.rawValue)
                return ([padded + field.type.description] + options).joined(separator: " ")
            }
            let roleOrder = CloudKitSchema.builtInRoles + schema.roles.sorted()
            let grants = type.grants.filter { !$0.permissions.isEmpty }.sorted {
                (roleOrder.firstIndex(of: $0.role) ?? Int.max, $0.role) < (roleOrder.firstIndex(of: $1.role) ?? Int.max, $1.role)
            }
            for grant in grants {
                let permissions = SchemaGrant.Permission.allCases.filter(grant.permissions.contains).map(\.rawValue).joined(separator: ", ")
                elements.append("GRANT \(permissions) TO \(name(grant.role))")
            }
            out += "\n    RECORD TYPE \(name(type.name)) (\n"
            out += elements.enumerated().map { i, e in "        " + e + (i < elements.count - 1 ? "," : "") }.joined(separator: "\n")
            out += "\n    );\n"
        }
        return out
    }

    /// A name as written: bare when it can be, else quoted (reserved words, system names, others).
    public static func name(_ name: String) -> String {
        let bare = name.first.map { $0.isASCII && $0.isLetter } == true
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            && !Parser.reserved.contains(name.uppercased())
            && !["DEFINE", "SCHEMA", "CREATE", "ROLE", "RECORD", "TYPE", "TO", "LIST", "ENCRYPTED", "NUMBER", "AS"].contains(name.uppercased())
        return bare ? name : "\"\(name)\""
    }
}
