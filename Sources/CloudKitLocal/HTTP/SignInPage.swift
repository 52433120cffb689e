import CloudKitWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sign-in page an `AUTHENTICATION_REQUIRED` answer's `redirectURL` points to (§2.2, §7.8): Apple
/// shows its own; this server shows its users (names only, no passwords: it is a local stand-in) and
/// signs the chosen one in.
///
///     GET  /signin?container=C[&callback=URL][&origin=O]    the page
///     POST /signin  (form: user, container, callback, origin, form)
///
/// After sign-in the browser goes to `callback?ckWebAuthToken=…` (the API token's Sign-In Callback)
/// when one is given; else the page hands the token to the window that opened it, with
/// `postMessage({ckSession, ckWebAuthToken}, O)`: CloudKit JS's popup listener reads `ckSession`
/// (issue 29), the reference's §2.2 names `ckWebAuthToken`, so both are sent. The token is never
/// shown.
///
/// Where a token may go (SERVER.md, "Threat model"): a callback and the opener's origin `O` must be
/// on this machine (a loopback host) or an origin `--allow-origin` names (not `*`), as a browser reads
/// the URL (`BrowserURL`: backslashes, userinfo, percent-encoding). The message goes to origin `O`
/// only, never `*`; without an `O` it goes to this server's own origin. The page has no CORS, cannot
/// be framed, and its form carries a signed nonce, so a cross-site form cannot mint a token.
extension LocalCloudKit {
    /// How long the sign-in form may be submitted after the page was shown.
    static let signInFormLifetime: Int64 = 10 * 60 * 1000

    func signInPage(_ request: ServerRequest) async -> ServerResponse {
        func page(_ status: Int, _ body: String) -> ServerResponse {
            ServerResponse(status: status, headers: Self.pageHeaders, body: Array("""
                <!doctype html><html><head><meta charset="utf-8"><title>Sign in — ckbrowse serve</title></head>
                <body style="font-family: sans-serif; max-width: 36em; margin: 3em auto">\(body)</body></html>

                """.utf8))
        }
        let isPost = request.method.uppercased() == "POST"
        guard isPost || request.method.uppercased() == "GET" else {
            var error = ServiceError(.badRequest, "method \(request.method.prefix(10)) not allowed: GET the page, POST its form", status: 405)
            error.extraHeaders = [("Allow", "GET, POST")]
            return error.response(uuid: Self.requestUUID())
        }
        let fields = isPost ? Self.formFields(String(decoding: request.body, as: UTF8.self)) : request.queryItems
        let container = fields["container"] ?? ""
        let callback = fields["callback"].flatMap { $0.isEmpty ? nil : $0 }
        let origin = fields["origin"].flatMap { $0.isEmpty ? nil : $0 }
        var target: BrowserURL?
        if let callback {
            guard let url = tokenDestination(callback) else {
                return page(400, "<p>The callback <code>\(Self.escape(callback))</code> is not on this machine or an allowed origin (serve --allow-origin).</p>")
            }
            target = url
        }
        if let origin, tokenDestination(origin).map({ $0.origin == origin }) != true {
            return page(400, "<p>The page <code>\(Self.escape(origin))</code> is not on this machine or an allowed origin (serve --allow-origin).</p>")
        }
        let users = credentials.userNames
        let now = Int64((configuration.now().timeIntervalSince1970 * 1000).rounded())
        guard isPost else {
            let form = signedToken(["s1", container, callback ?? "", origin ?? "", String(now + Self.signInFormLifetime)])
            let options = users.map { "<p><button name=\"user\" value=\"\(Self.escape($0))\">Sign in as \(Self.escape($0))</button></p>" }.joined()
            return page(200, """
                <h1>Sign in to \(Self.escape(container.isEmpty ? "this server" : container))</h1>
                <p>A local CloudKit stand-in (<code>ckbrowse serve</code>): choose a user.</p>
                <form method="post" action="/signin">
                <input type="hidden" name="container" value="\(Self.escape(container))">
                <input type="hidden" name="callback" value="\(Self.escape(callback ?? ""))">
                <input type="hidden" name="origin" value="\(Self.escape(origin ?? ""))">
                <input type="hidden" name="form" value="\(Self.escape(form))">
                \(users.isEmpty ? "<p>No users are configured (serve --user NAME:TOKEN).</p>" : options)
                </form>
                """)
        }
        // The form this server showed, for these very fields, not long ago: a page elsewhere cannot
        // read the page (no CORS), so it cannot post a form that passes.
        guard let form = fields["form"], let parts = verifiedToken(form, kind: "s1", parts: 5), parts[1] == container, parts[2] == (callback ?? ""),
            parts[3] == (origin ?? ""), let expires = Int64(parts[4]), now <= expires
        else {
            return page(403, "<p>This sign-in form is not one this server showed, or it expired: <a href=\"/signin?container=\(Self.escape(PercentEncoding.encodeQueryValue(container)))\">start again</a>.</p>")
        }
        guard let user = fields["user"], users.contains(user) else { return page(400, "<p>No such user.</p>") }
        let token = mintWebAuthToken(user: user, session: UUID().uuidString.lowercased(), reusable: false)
        if let target {
            return ServerResponse(status: 302, headers: Self.pageHeaders + [(name: "Location", value: Self.location(target, token: token))], body: [])
        }
        // No callback: the opener (CloudKit JS) receives the token, at its own origin only.
        let message = String(decoding: JSON.object(["ckSession": .string(token), "ckWebAuthToken": .string(token)]).bytes, as: UTF8.self)
        let destination = origin ?? request.header("Host").map { "http://" + $0 } ?? ""
        let originJSON = String(decoding: JSON.string(destination).bytes, as: UTF8.self)
        return page(200, """
            <p>Signed in as \(Self.escape(user)). You can close this window.</p>
            <script>if (window.opener) { window.opener.postMessage(\(Self.scriptSafe(message)), \(Self.scriptSafe(originJSON))); window.close(); }</script>
            """)
    }

    /// A URL a token may be sent to, as the browser will read it: http(s), no userinfo, on a loopback
    /// host or at an origin `--allow-origin` names explicitly (a `*` does not count: it lets pages
    /// read public data, not receive users' tokens).
    func tokenDestination(_ text: String) -> BrowserURL? {
        guard let url = BrowserURL(text), url.userinfo == nil else { return nil }
        if BrowserURL.isLoopbackHost(url.host) { return url }
        return configuration.allowedOrigins?.contains(url.origin) == true ? url : nil
    }

    /// The callback with `ckWebAuthToken` added to its query (before any fragment), rebuilt from what
    /// the browser reads, so the host checked is the host the browser goes to.
    static func location(_ url: BrowserURL, token: String) -> String {
        var rest = Substring(url.path)
        var fragment: Substring = ""
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[hash...]
            rest = rest[..<hash]
        }
        if rest.isEmpty || rest.first == "?" { rest = "/" + rest }
        let separator = rest.contains("?") ? "&" : "?"
        return url.origin + rest.replacing("\\", with: "/") + separator + "ckWebAuthToken=" + PercentEncoding.encodeQueryValue(token) + fragment
    }

    /// Sign-in answers: never cached, never framed, never sent as a Referer to another site.
    ///
    /// `same-origin`, not `no-referrer`: under `no-referrer` a browser sends the page's own form POST
    /// with `Origin: null` (the Fetch standard's origin serialization), which the POST's rule refuses,
    /// so no browser could sign in (a headless chromium showed it: `tests/e2e/cors.sh`). Under
    /// `same-origin` the form's POST carries this server's origin, and the redirect to the callback, on
    /// another origin, carries no Referer.
    static let pageHeaders: [(name: String, value: String)] = [
        (name: "Content-Type", value: "text/html; charset=UTF-8"), (name: "Cache-Control", value: "no-store"),
        (name: "X-Frame-Options", value: "DENY"), (name: "Content-Security-Policy", value: "frame-ancestors 'none'"),
        (name: "Referrer-Policy", value: "same-origin"),
    ]

    static func formFields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard let key = PercentEncoding.decode(kv[0], plusAsSpace: true) else { continue }
            fields[key] = kv.count > 1 ? PercentEncoding.decode(kv[1], plusAsSpace: true) ?? "" : ""
        }
        return fields
    }

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }

    /// JSON placed inside a `<script>`: `<` escaped, so no `</script>` can end it.
    static func scriptSafe(_ json: String) -> String { json.replacing("<", with: "\\u003c") }
}
