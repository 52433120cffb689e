/// Why bytes could not be read as JSON, or JSON could not be read as a CloudKit dictionary.
///
/// The message names the place (`records[3].fields.age.value`) and what was expected, never the
/// value found there: values can be record payloads or tokens.
public struct JSONDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Byte offset for syntax errors; nil for shape errors.
    public var offset: Int?
    /// Path from the document root, e.g. `["records", "[3]", "fields", "age"]`.
    public var path: [String]
    public var message: String

    public init(offset: Int? = nil, path: [String] = [], message: String) {
        self.offset = offset
        self.path = path
        self.message = message
    }

    public var pathString: String {
        var result = ""
        for component in path {
            if component.hasPrefix("[") || result.isEmpty { result += component } else { result += "." + component }
        }
        return result
    }

    public var description: String {
        if let offset { return "invalid JSON at byte \(offset): \(message)" }
        if path.isEmpty { return message }
        return "\(pathString): \(message)"
    }

    package func prefixed(_ component: String) -> JSONDecodingError {
        var copy = self
        copy.path.insert(component, at: 0)
        return copy
    }
}

/// Runs `body`, adding `component` to the path of any decoding error it throws.
@inline(__always)
package func at<T>(_ component: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as JSONDecodingError {
        throw error.prefixed(component())
    }
}
