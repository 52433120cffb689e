import CloudKitWeb
import SQLiteDB

/// Our schema endpoint (CloudKit Web Services has none; Apple's is cktool's management API):
///
///     GET  /schema/1/{container}/{environment}            the schema as a .ckdb file (text/plain)
///     POST /schema/1/{container}/{environment}/validate   body: a .ckdb file; checks it, changes nothing
///     POST /schema/1/{container}/development/import       body: a .ckdb file; replaces development's schema
///     POST /schema/1/{container}/development/deploy       promotes development's schema to production
///     POST /schema/1/{container}/development/reset        development := production's schema, its data deleted
///
/// Each needs `ckAPIToken` valid for the container (a local stand-in for cktool's management token).
/// Errors have CloudKit's error shape (`serverErrorCode`, `reason`, `uuid`); a .ckdb syntax error's
/// reason starts with `line L:C:`. Answers of POSTs: `{"changes": [sentences]}`.
extension LocalCloudKit {
    static let schemaPathPrefix = "/schema/1/"

    func handleSchema(_ request: ServerRequest, uuid: String) async throws -> ServerResponse {
        let parts = request.path.dropFirst(Self.schemaPathPrefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(parts.count), let container = PercentEncoding.decode(Substring(parts[0])), !container.isEmpty else {
            throw ServiceError(.notFound, "could not find handler for endpoint", status: 404)
        }
        guard let environment = CloudKitEnvironment(rawValue: parts[1]) else {
            throw ServiceError.badRequest("unknown environment '\(parts[1].prefix(40))'; use development or production")
        }
        let action = parts.count == 3 ? parts[2] : ""
        let method = request.method.uppercased()
        guard (action.isEmpty && method == "GET") || (!action.isEmpty && method == "POST") else {
            throw ServiceError(.badRequest, "method \(method.prefix(10)) not allowed here", status: 405)
        }
        try checkOwnEndpointAccess(request, container: container)

        func parsed() throws -> CloudKitSchema {
            guard let text = String(validating: request.body, as: UTF8.self) else { throw ServiceError.badRequest("the schema is not UTF-8 text") }
            do { return try SchemaLanguage.parse(text) } catch { throw ServiceError.badRequest(error.description) }
        }
        func changes(_ lines: [String]) -> ServerResponse {
            respond(200, .object(["changes": .array(lines.map { .string($0) })]), uuid: uuid, extra: [])
        }
        switch action {
        case "":
            var text = SchemaLanguage.write(try schema(container: container, environment: environment))
            if try schemaIsInferred(container: container, environment: environment) {
                text = "// Inferred from data written before ckbrowse kept schemas: every field indexed.\n" + text
            }
            return ServerResponse(status: 200, headers: [(name: "Content-Type", value: "text/plain; charset=UTF-8")], body: Array(text.utf8))
        case "validate":
            let schema = try parsed()
            let production = try self.schema(container: container, environment: .production)
            let problems = SchemaCompatibility.destructiveChanges(from: production, to: schema)
            guard problems.isEmpty else { throw ServiceError.badRequest("schema refused: " + problems.joined(separator: "; ")) }
            return changes([])
        case "import" where environment == .development:
            return changes(try await importSchema(try parsed(), container: container).lines)
        case "deploy" where environment == .development:
            try await deploySchema(container: container)
            return changes(["development's schema is now production's"])
        case "reset" where environment == .development:
            return changes(try await resetSchema(container: container).lines)
        case "import", "deploy", "reset":
            throw ServiceError.badRequest("\(action) applies to development only (production changes only by deploy)")
        default:
            throw ServiceError(.notFound, "could not find handler for endpoint", status: 404)
        }
    }
}
