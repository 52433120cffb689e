import CloudKitWeb

/// Where a request may come from (SERVER.md, "Threat model"). The server listens on the developer's
/// machine, where any web page the developer opens can make the browser send it requests:
///
/// - `Host` must name this server: an IP address, `localhost` (or `*.localhost`), or a name given
///   with `--allow-host`. A DNS-rebinding page reaches the server under its own domain name and is
///   refused here.
/// - A request from a web page (`Origin`) runs only if the endpoint takes web pages and the origin is
///   allowed: `--allow-origin` when given (`*` for any), else pages served from this machine
///   (loopback origins). It is refused before anything runs: a "simple" cross-site POST, which no
///   CORS preflight stops, changes nothing.
/// - Our management endpoints (schema, fixture reset) take no web page at all, so a page that knows
///   the public API token (every CloudKit JS page publishes it) cannot drive them.
extension LocalCloudKit {
    /// The refusal of a request that comes from somewhere the endpoint table does not allow; nil
    /// lets it through.
    func requestPolicyRefusal(_ request: ServerRequest) -> ServiceError? {
        requestPolicyRefusal(request, rule: EndpointRule.rule(path: request.path, method: request.method))
    }

    /// The same, for a request whose endpoint rule is known (the event loop's path has routed it).
    func requestPolicyRefusal(_ request: ServerRequest, rule: EndpointRule?) -> ServiceError? {
        if let host = request.header("Host"), !hostAllowed(host) {
            return ServiceError(
                .accessDenied, "the Host '\(host.prefix(100))' is not this server's (use 127.0.0.1 or localhost, or serve --allow-host NAME)",
                status: 403)
        }
        let origin = request.header("Origin")
        let mode = request.header("Sec-Fetch-Mode")
        switch rule?.pages {
        case .none?:
            // A top-level navigation (the sign-in popup, a link to /ready) is a person, not a script.
            if origin != nil || (mode != nil && mode != "navigate") {
                return ServiceError(.accessDenied, "web pages may not call \(Self.quoted(request.path, limit: 200)): it is for tools, not browsers", status: 403)
            }
        case .ownPage?:
            if let origin, !isOwnOrigin(origin, request) {
                return ServiceError(.accessDenied, "only this server's own sign-in page may post here (origin \(origin.prefix(100)))", status: 403)
            }
        case .allowedOrigins?, nil:
            if let origin, !originAllowed(origin, request: request) {
                return ServiceError(.accessDenied, "origin \(origin.prefix(100)) is not allowed (serve --allow-origin)", status: 403)
            }
        }
        return nil
    }

    /// An origin whose pages may call the server's CloudKit endpoints.
    func originAllowed(_ origin: String, request: ServerRequest) -> Bool {
        if let allowed = configuration.allowedOrigins {
            if allowed.contains("*") || allowed.contains(origin) { return true }
        } else if Self.isLoopbackOrigin(origin) {
            return true
        }
        return isOwnOrigin(origin, request)
    }

    /// The page making the request was served by this server (same scheme, host and port).
    func isOwnOrigin(_ origin: String, _ request: ServerRequest) -> Bool {
        guard let host = request.header("Host") else { return false }
        return origin == "http://" + host
    }

    /// `http(s)://` on a loopback host (any port): a page served from this machine.
    static func isLoopbackOrigin(_ origin: String) -> Bool {
        guard let url = BrowserURL(origin), ["http", "https"].contains(url.scheme), url.userinfo == nil, url.path.isEmpty || url.path == "/" else {
            return false
        }
        return BrowserURL.isLoopbackHost(url.host)
    }

    /// A `Host` header naming this server: an IP literal (DNS rebinding needs a name), `localhost`,
    /// `*.localhost`, or a name `--allow-host` gives.
    func hostAllowed(_ header: String) -> Bool {
        // Every request passes here: the usual `127.0.0.1:PORT` / `localhost:PORT` is read from its
        // bytes before anything allocates.
        if Self.isLoopbackHostHeader(header) { return true }
        var host = Substring(header.lowercased())
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            return BrowserURL.isIPv6Literal(host[host.index(after: host.startIndex)..<close])
        }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        if BrowserURL.isIPv4Literal(host) || host == "localhost" || host.hasSuffix(".localhost") { return true }
        return configuration.allowedHosts.contains(String(host))
    }

    /// `127.0.0.1` or `localhost` (lower case), with or without a port of digits: what local clients
    /// send. Anything else (other case, other addresses) is `hostAllowed`'s to judge.
    static func isLoopbackHostHeader(_ header: String) -> Bool {
        var header = header
        return header.withUTF8 { bytes in
            var end = bytes.count
            if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
                guard colon + 1 < bytes.count, bytes[(colon + 1)...].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return false }
                end = colon
            }
            let name = UnsafeBufferPointer(rebasing: bytes[..<end])
            return name.elementsEqual("127.0.0.1".utf8) || name.elementsEqual("localhost".utf8)
        }
    }
}
