import CloudKitWeb
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Authentication as the service does it (§2): `ckAPIToken` bound to a container, `ckWebAuthToken`
/// (or its alias `ckSession`) naming a signed-in user, or a server-to-server key's signature. What is
/// accepted is the configuration's `CredentialSet`, read at start; nothing here touches SQLite.
extension LocalCloudKit {
    struct Caller: Sendable {
        /// The `ckAPIToken` the request was accepted with (nil for server-to-server keys).
        var apiToken: String?
        var userName: String?
        var userRecordName: String?
        var keyID: String?
        var webToken: String?
        /// The web auth session (stable across token rotations).
        var session: String?
        /// `X-CK-Device-Token`: our extension naming the writing device (origin exclusion `header`).
        var deviceToken: String?
        /// The single-use web auth token this request spent (given back if the answer is an error).
        var spentToken: String?

        var actingRecordName: String? { userRecordName ?? keyID.map(LocalCloudKit.keyUserRecordName) }
    }

    func authenticate(_ request: ServerRequest, route: Route) throws -> Caller {
        if let keyID = request.header("X-Apple-CloudKit-Request-KeyID") {
            return try authenticateServerKey(request, keyID: keyID, route: route)
        }
        let query = request.credentials
        guard let apiToken = query.apiToken, !apiToken.isEmpty else {
            throw ServiceError(.authenticationFailed, "missing ckAPIToken")
        }
        guard credentials.acceptsAPIToken(apiToken, container: route.container) else {
            throw ServiceError(.authenticationFailed, "unknown API token for this container")
        }
        var caller = Caller(apiToken: apiToken)
        caller.deviceToken = request.header("X-CK-Device-Token")
        // `ckSession` is accepted as an alias of `ckWebAuthToken` (reference §1.2, unconfirmed).
        if let token = query.webAuthToken, !token.isEmpty {
            // The service rejects a token whose `+`, `/` or `=` were not percent-encoded (§1.2); so
            // does this server, so that a client with that bug fails here as it would live.
            if let raw = query.rawWebAuthToken, Self.hasUnencodedBase64(raw) {
                throw authenticationRequired(route, request, reason: "the web auth token is not valid: its '+', '/' and '=' must be sent percent-encoded (%2B, %2F, %3D)")
            }
            guard let user = signedInUser(webToken: token) else {
                throw authenticationRequired(route, request, reason: "the web auth token is not valid (expired, revoked or unknown): sign in again")
            }
            if configuration.singleUseWebAuthTokens {
                guard spend(token) else {
                    throw authenticationRequired(
                        route, request,
                        reason: "the web auth token was already used: each works once (send the one from the last answer's X-Apple-CloudKit-Web-Auth-Token)")
                }
                caller.spentToken = token
            }
            caller.userName = user.name
            caller.userRecordName = user.recordName
            caller.webToken = token
            caller.session = user.session
        }
        if caller.userName == nil && route.needsUser {
            throw authenticationRequired(route, request, reason: "request needs authorization")
        }
        return caller
    }

    /// Our own endpoints (schema, admin) name a container and take `ckAPIToken` valid for it.
    func checkOwnEndpointAccess(_ request: ServerRequest, container: String) throws {
        guard Route.isContainerID(container) else { throw Route.invalidContainer(container) }
        guard let token = request.credentials.apiToken, !token.isEmpty else { throw ServiceError(.authenticationFailed, "missing ckAPIToken") }
        guard credentials.acceptsAPIToken(token, container: container) else {
            throw ServiceError(.authenticationFailed, "unknown API token for this container")
        }
    }

    /// 421 with the sign-in page as `redirectURL`. The page is told the requesting page's origin
    /// (when it is one that may call the server), so that it hands the token to that origin only.
    func authenticationRequired(_ route: Route, _ request: ServerRequest? = nil, reason: String) -> ServiceError {
        var url = baseURL.withLock { $0 } + "/signin?container=" + PercentEncoding.encodeQueryValue(route.container)
        if let origin = request?.header("Origin"), originAllowed(origin, request: request!) {
            url += "&origin=" + PercentEncoding.encodeQueryValue(origin)
        }
        return ServiceError(.authenticationRequired, reason, redirectURL: url)
    }

    func authenticateServerKey(_ request: ServerRequest, keyID: String, route: Route) throws -> Caller {
        let failed = ServiceError(.authenticationFailed, "authentication failed")
        guard let dateText = request.header("X-Apple-CloudKit-Request-ISO8601Date"),
            let signatureText = request.header("X-Apple-CloudKit-Request-SignatureV1"),
            let date = ISO8601.date(from: dateText),
            abs(date.timeIntervalSince(configuration.now())) <= configuration.signatureWindow,
            let signatureData = Data(base64Encoded: signatureText),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureData)
        else { throw failed }
        // A key bound to a container signs for that container only.
        guard let pem = credentials.serverKey(keyID, container: route.container), let key = try? P256.Signing.PublicKey(pemRepresentation: pem) else {
            throw failed
        }
        // Both body-hash forms clients send for bodyless requests are accepted: empty, and hash of "".
        var candidates = [ServerToServerKey.stringToSign(date: dateText, body: request.body.isEmpty ? nil : request.body, subpath: request.path)]
        if request.body.isEmpty { candidates.append(ServerToServerKey.stringToSign(date: dateText, body: [], subpath: request.path)) }
        guard candidates.contains(where: { key.isValidSignature(signature, for: Array($0.utf8)) }) else { throw failed }
        // Server-to-server keys reach only the public database, and no users/* endpoint.
        guard !route.endpoint.operation.hasPrefix("users/") else {
            throw ServiceError(.authenticationFailed, "server-to-server keys cannot call users endpoints (there is no signed-in user)")
        }
        guard route.scope == .public else {
            throw ServiceError(.authenticationFailed, "server-to-server keys can only access the public database")
        }
        return Caller(keyID: keyID)
    }

    // MARK: - Web auth tokens

    /// The user a web auth token signs in: a configured `--user` token, or one this server minted
    /// (MAC right, not expired, for a user configured now with the tokens it was minted under).
    func signedInUser(webToken token: String) -> SignedInUser? {
        if let known = credentials.usersByToken[token] {
            return SignedInUser(name: known.user.name, recordName: known.user.recordName, session: known.session)
        }
        guard let minted = mintedTokenParts(token), let user = credentials.usersByName[minted.user] else { return nil }
        return SignedInUser(name: user.name, recordName: user.recordName, session: minted.session)
    }

    /// Marks a single-use token used; false if it already was.
    func spend(_ token: String) -> Bool { usedWebTokens.withLock { $0.insert(token).inserted } }

    /// Gives a single-use token back: the answer that would have carried its replacement was an error.
    func unspend(_ token: String?) {
        guard let token else { return }
        _ = usedWebTokens.withLock { $0.remove(token) }
    }

    /// The user and session of a token this server minted, if its MAC is right, it has not expired
    /// and its user's configured tokens are the ones it was minted under.
    func mintedTokenParts(_ token: String) -> (user: String, session: String)? {
        guard let parts = OpaqueToken.decode(token), parts.count == 6, parts[0] == "w2", let expires = Int64(parts[3]) else { return nil }
        guard let user = credentials.usersByName[parts[1]] else { return nil }
        let expected = mac([parts[1], parts[2], parts[3], parts[4], user.fingerprint].joined(separator: "\u{1F}"))
        guard expected == parts[5], Double(expires) >= configuration.now().timeIntervalSince1970 else { return nil }
        return (parts[1], parts[2])
    }

    /// A fresh token for a user's session, valid `webAuthTokenLifetime` from now. A rotated token
    /// carries the session of the token it replaces, so a session survives rotation (origin exclusion
    /// `session` compares sessions).
    ///
    /// Unless tokens are single-use, answers to one session within the same second carry the same
    /// token (`mintedTokens`): it would differ only in its nonce and give the same rights until the
    /// same moment, and minting one (a MAC, a nonce, two encodings) was an eighth of what an answer
    /// from the answer cache cost. A single-use token is spent by its first use, so each answer then
    /// gets its own.
    /// `reusable: false` (a sign-in's token, of a session just begun) is never shared nor remembered.
    func mintWebAuthToken(user: String, session: String, reusable: Bool = true) -> String {
        let expires = Int64((configuration.now().timeIntervalSince1970 + configuration.webAuthTokenLifetime).rounded(.up))
        let fingerprint = credentials.usersByName[user]?.fingerprint ?? ""
        let key = MintedTokenKey(user: user, session: session, fingerprint: fingerprint)
        let reuse = reusable && !configuration.singleUseWebAuthTokens
        if reuse, let token = mintedTokens.withLock({ $0.second == expires ? $0.tokens[key] : nil }) { return token }
        var random = SystemRandomNumberGenerator()
        let nonce = Base64URL.encode(withUnsafeBytes(of: (random.next() as UInt64, random.next() as UInt64)) { Array($0) })
        let expiry = String(expires)
        let token = OpaqueToken.encode(["w2", user, session, expiry, nonce, mac([user, session, expiry, nonce, fingerprint].joined(separator: "\u{1F}"))])
        if reuse {
            mintedTokens.withLock { memo in
                // One second's tokens: the next second starts again; past 256 sessions in one second
                // the others are minted each time.
                if memo.second != expires { memo = MintedTokens(second: expires) }
                if memo.tokens.count < 256 { memo.tokens[key] = token }
            }
        }
        return token
    }

    /// The session a web auth token belongs to: carried by the tokens this server mints, otherwise
    /// derived from the token itself.
    static func session(ofWebToken token: String) -> String {
        if let parts = OpaqueToken.decode(token), parts.count == 6, parts[0] == "w2" { return parts[2] }
        return String.hex(SHA256.hash(data: Data(token.utf8)).prefix(8))
    }

    /// A raw (not yet percent-decoded) query value holding `+`, `/` or `=`, which a web auth token
    /// must send percent-encoded (§1.2).
    static func hasUnencodedBase64(_ raw: Substring) -> Bool {
        raw.utf8.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") }
    }

    func mac(_ text: String) -> String {
        var mac = tokenMAC
        mac.update(data: Array(text.utf8))
        return Data(mac.finalize()).base64EncodedString()
    }
}

/// What a minted web auth token says, but its expiry and nonce (`mintWebAuthToken`).
struct MintedTokenKey: Hashable, Sendable {
    var user: String
    var session: String
    var fingerprint: String
}

/// The tokens minted for one expiry second (`mintWebAuthToken`).
struct MintedTokens: Sendable {
    var second: Int64 = 0
    var tokens: [MintedTokenKey: String] = [:]
}
