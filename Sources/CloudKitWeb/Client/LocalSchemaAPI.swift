import CloudKitModels

/// `ckbrowse serve`'s schema endpoint (`/schema/1/{container}/{environment}[/{action}]`). It is ours:
/// CloudKit Web Services has no schema endpoint (Apple's is cktool's management API), so against
/// Apple's service these calls answer 404 and the browser infers the schema instead.
extension CloudKitClient {
    public enum SchemaAction: String, Sendable {
        case validate, `import`, deploy, reset
    }

    /// The schema of the configured container and environment (or `environment`) as a `.ckdb` file.
    public func schemaText(environment: CloudKitEnvironment? = nil) async throws -> String {
        let response = try await schemaExchange(.get, action: nil, body: nil, environment: environment)
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Sends a `.ckdb` file (validate, import) or nothing (deploy, reset); answers what changed.
    public func schema(_ action: SchemaAction, text: String? = nil) async throws -> [String] {
        let response = try await schemaExchange(.post, action: action, body: text.map { Array($0.utf8) } ?? [])
        guard let json = try? JSON(parsing: response.body), case .array(let lines)? = json["changes"] else {
            throw CloudKitError(kind: .invalidResponse, operation: "schema/\(action.rawValue)", reason: "the answer has no changes list")
        }
        return lines.compactMap(\.stringValue)
    }

    func schemaExchange(_ method: HTTPMethod, action: SchemaAction?, body: [UInt8]?, environment: CloudKitEnvironment? = nil) async throws -> HTTPResponse {
        let operation = "schema" + (action.map { "/" + $0.rawValue } ?? "")
        let credentials = await session.snapshot()
        guard case .apiToken(let apiToken, _) = credentials.credentials else {
            throw CloudKitError(kind: .invalidRequest, operation: operation, reason: "the schema endpoint needs an API token")
        }
        var url = configuration.serverURL + "/schema/1/" + PercentEncoding.encodePathSegment(configuration.container)
            + "/" + (environment ?? configuration.environment).rawValue
        if let action { url += "/" + action.rawValue }
        url += "?ckAPIToken=" + PercentEncoding.encodeQueryValue(apiToken)
        let request = HTTPRequest(
            method: method, url: url, headers: body == nil ? [] : [(name: "Content-Type", value: "text/plain; charset=UTF-8")], body: body,
            timeout: configuration.requestTimeout)
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch var error as CloudKitError {
            error.operation = operation
            throw error.redacting(credentials.secrets)
        } catch {
            throw CloudKitError(kind: .transport, operation: operation, reason: "request failed").redacting(credentials.secrets)
        }
        guard (200..<300).contains(response.status) else {
            if let json = try? JSON(parsing: response.body), case .object(let object) = json, object["serverErrorCode"] != nil,
                let info = try? ServerErrorInfo(object: object)
            {
                throw CloudKitError(server: info, operation: operation, httpStatus: response.status).redacting(credentials.secrets)
            }
            let reason = response.status == 404 ? "this server has no schema endpoint (only ckbrowse serve has one)" : "unexpected answer"
            throw CloudKitError(kind: .server, operation: operation, httpStatus: response.status, reason: reason)
        }
        return response
    }
}
