import CloudKitModels
import TerminalUI

/// The `$EDITOR` form of a record's fields: a `//` comment header, then the fields as the wire's
/// field dictionary (`{"title": {"value": "…", "type": "STRING"}, …}`).
public enum FieldsJSON {
    /// The file handed to the editor. `error` (from the previous attempt) goes at the top.
    public static func text(record: Record, operation: StagedOperation?, error: String?) -> String {
        let fields = operation?.kind == .update ? operation!.resultingFields : record.fields
        // Invisible and bidi characters as \uXXXX: the same values, and an editor shows nothing hidden.
        return header(record: record, error: error) + TerminalText.json(Record.encodeFields(fields).prettyPrinted()) + "\n"
    }

    static func header(record: Record, error: String?) -> String {
        var lines: [String] = []
        if let error {
            lines += ["// ERROR: " + error.replacing("\n", with: " "), "// Fix it and save again; quit without saving (or empty the file) to cancel.", "//"]
        }
        lines += [
            "// ckbrowse: the fields of \(record.recordType ?? "record") '\(record.recordName)' (change tag \(record.recordChangeTag ?? "none")).",
            "// Save and quit to stage the changes. A field removed here is cleared (set to null).",
            "// \"type\" may be left out for fields the record already has. Lines starting with // are ignored.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The text without its leading `//` lines.
    public static func body(of text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let first = lines.first, first.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("//") { lines = lines.dropFirst() }
        return lines.joined(separator: "\n")
    }

    /// Line and column (1-based, columns in characters) of a byte offset in `text`.
    static func position(of offset: Int, in text: String) -> (line: Int, column: Int) {
        let bytes = Array(text.utf8.prefix(offset))
        let line = bytes.filter { $0 == 0x0A }.count + 1
        let lastLine = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).last ?? []
        return (line, String(decoding: lastLine, as: UTF8.self).count + 1)
    }

    /// The same text with a new header (the user's JSON kept exactly).
    public static func reopen(_ text: String, record: Record, error: String) -> String {
        header(record: record, error: error) + body(of: text)
    }

    /// The changes the edited text makes relative to `base`, or nil when the user emptied the file
    /// (cancel). Throws a message for invalid JSON, wrong types and uneditable fields.
    public static func changes(from text: String, base: [String: FieldValue]) throws(FieldInputError) -> [String: FieldValue]? {
        let body = body(of: text)
        guard !body.allSatisfy(\.isWhitespace) else { return nil }
        let json: JSON
        do { json = try JSON(parsing: body) } catch let error as JSONDecodingError {
            // Where the editor shows it: line and column of the file (its // header lines counted).
            if let offset = error.offset {
                let (line, column) = position(of: offset, in: body)
                let headerLines = text.split(separator: "\n", omittingEmptySubsequences: false).count - body.split(separator: "\n", omittingEmptySubsequences: false).count
                throw FieldInputError("invalid JSON at line \(line + headerLines), column \(column): \(error.message)")
            }
            throw FieldInputError("invalid JSON: \(error)")
        } catch { throw FieldInputError("invalid JSON: \(error)") }
        guard case .object(let object) = json else { throw FieldInputError("the file must hold one JSON object of fields, not \(json.kindName)") }
        var edited: [String: FieldValue] = [:]
        for (name, value) in object.pairs {
            guard edited[name] == nil else { throw FieldInputError("field '\(name)' appears twice") }
            guard FieldNames.isValid(name) else { throw FieldInputError("'\(name)' is not a valid field name (a letter, then letters, digits or _)") }
            var valueJSON = value
            // The type may be left out for an existing field: it keeps its type.
            if case .object(var dict) = value {
                if dict["type"] == nil, let old = base[name], old != .null {
                    dict.set("type", old.type.rawValue)
                    valueJSON = .object(dict)
                }
            } else if !value.isNull {
                throw FieldInputError("field '\(name)': expected {\"value\": …, \"type\": …} or null, found \(value.kindName)")
            }
            if case .object(let dict) = valueJSON, let type = dict["type"], type.stringValue == nil {
                throw FieldInputError("\(name): \"type\" names a type such as INT64 or STRING, not \(shown(type))")
            }
            let field: FieldValue
            do { field = try FieldValue(json: valueJSON) } catch { throw parseError(name, valueJSON, error) }
            if let old = base[name], old != .null, field != .null, old.type != field.type {
                throw FieldInputError("field '\(name)' is \(old.type.rawValue) in this record; the file gives \(field.type.rawValue)")
            }
            if field != base[name], field != .null {
                switch field {
                case .asset, .assetList: throw FieldInputError("field '\(name)': assets are uploaded, not edited here")
                case .encryptedBytes: throw FieldInputError("field '\(name)': encrypted fields cannot be edited here")
                case .other(let type, _): throw FieldInputError("field '\(name)': fields of type \(type) cannot be edited here")
                default: break
                }
            }
            edited[name] = field
        }
        var changes: [String: FieldValue] = [:]
        for (name, value) in edited where !StagedOperation.isNoChange(value, base: base[name]) { changes[name] = value }
        for name in base.keys where edited[name] == nil && base[name] != .null { changes[name] = .null }
        return changes
    }
}

extension FieldsJSON {
    /// What was wrong with a field's value, in the words the user typed it in:
    /// `year: "twenty" is not an integer (INT64)`, `tags[2]: 3 is not a string (STRING_LIST)`.
    static func parseError(_ name: String, _ field: JSON, _ error: Error) -> FieldInputError {
        guard case .object(let dict) = field, let value = dict["value"] else { return FieldInputError("\(name): \(error)") }
        let type = dict["type"]?.stringValue.map(FieldType.init(rawValue:)) ?? FieldValue.inferType(of: value)
        guard type.isList, let elementType = type.elementType else { return wrong(name, value, as: type, shownType: type, error) }
        guard case .array(let elements) = value else {
            return FieldInputError("\(name): \(shown(value)) is not a list (\(type.rawValue): a JSON array)")
        }
        for (i, element) in elements.enumerated() {
            do { _ = try FieldValue.decode(element, as: elementType) } catch { return wrong("\(name)[\(i)]", element, as: elementType, shownType: type, error) }
        }
        return FieldInputError("\(name): \(error)")
    }

    private static func wrong(_ name: String, _ value: JSON, as type: FieldType, shownType: FieldType, _ error: Error) -> FieldInputError {
        var text = "\(name): \(shown(value)) is not \(noun(type))"
        if type == .int64, case .double(let d) = value, d.rounded() == d { text = "\(name): \(shown(value)) is outside the range of an integer" }
        text += " (\(shownType.rawValue))"
        // An object's missing or wrong key says which, in the model's words (recordName, latitude…).
        if case .object = value, let decoding = error as? JSONDecodingError {
            var inner = decoding
            if inner.path.first == "value" { inner.path.removeFirst() }
            text += ": \(inner.description)"
        }
        return FieldInputError(text)
    }

    /// What a value of `type` is, for "is not …".
    static func noun(_ type: FieldType) -> String {
        switch type {
        case .string: return "a string"
        case .int64: return "an integer"
        case .double: return "a number"
        case .timestamp: return "a time (whole milliseconds since 1970)"
        case .bytes, .encryptedBytes: return "base64 data"
        case .reference: return "a reference ({\"recordName\": …, \"action\": \"NONE\"})"
        case .location: return "a location ({\"latitude\": …, \"longitude\": …})"
        case .assetID, .asset: return "an asset"
        default: return "a \(type.rawValue) value"
        }
    }

    /// The value as the file has it, cut short.
    static func shown(_ value: JSON) -> String {
        let text = value.text
        return text.count > 40 ? String(text.prefix(39)) + "…" : text
    }
}

/// CloudKit field names: a letter, then letters, digits and underscores (at most 255).
public enum FieldNames {
    public static func isValid(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 255, ("A"..."Z").contains(first) || ("a"..."z").contains(first) else {
            return false
        }
        return name.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }
}
