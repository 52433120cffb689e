import CloudKitWeb
import Foundation
import GRDB

/// The sign-in page an `AUTHENTICATION_REQUIRED` answer's `redirectURL` points to (§2.2, §7.8): Apple
/// shows its own; this server shows its users (names only, no passwords: it is a local stand-in) and
/// signs the chosen one in. After sign-in the browser goes to `callback?ckWebAuthToken=…` (the API
/// token's Sign-In Callback) when one is given, else the page hands the token to the window that
/// opened it with `postMessage({ckWebAuthToken})`, as CloudKit JS expects. The token is never shown.
///
///     GET  /signin?container=C[&callback=URL]    the page
///     POST /signin  (form: user, container, callback)
///
/// A callback must be on a loopback host or an allowed origin (`--allow-origin`), so the page cannot
/// hand a token to another site.
extension LocalCloudKit {
    func signInPage(_ request: ServerRequest) async -> ServerResponse {
        let html = [(name: "Content-Type", value: "text/html; charset=UTF-8")]
        func page(_ status: Int, _ body: String) -> ServerResponse {
            ServerResponse(status: status, headers: html + [(name: "Cache-Control", value: "no-store")], body: Array("""
                <!doctype html><html><head><meta charset="utf-8"><title>Sign in — ckbrowse serve</title></head>
                <body style="font-family: sans-serif; max-width: 36em; margin: 3em auto">\(body)</body></html>

                """.utf8))
        }
        let fields: [String: String]
        if request.method.uppercased() == "POST" {
            fields = Self.formFields(String(decoding: request.body, as: UTF8.self))
        } else {
            fields = request.queryItems
        }
        let container = fields["container"] ?? ""
        let callback = fields["callback"].flatMap { $0.isEmpty ? nil : $0 }
        if let callback, !callbackAllowed(callback) {
            return page(400, "<p>The callback <code>\(Self.escape(callback))</code> is not on this machine or an allowed origin.</p>")
        }
        let users = (try? await store.pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM web_user GROUP BY name ORDER BY name") }) ?? []
        guard request.method.uppercased() == "POST" else {
            let options = users.map { "<p><button name=\"user\" value=\"\(Self.escape($0))\">Sign in as \(Self.escape($0))</button></p>" }.joined()
            return page(200, """
                <h1>Sign in to \(Self.escape(container.isEmpty ? "this server" : container))</h1>
                <p>A local CloudKit stand-in (<code>ckbrowse serve</code>): choose a user.</p>
                <form method="post" action="/signin">
                <input type="hidden" name="container" value="\(Self.escape(container))">
                <input type="hidden" name="callback" value="\(Self.escape(callback ?? ""))">
                \(users.isEmpty ? "<p>No users are configured (serve --user NAME:TOKEN).</p>" : options)
                </form>
                """)
        }
        guard let user = fields["user"], users.contains(user) else { return page(400, "<p>No such user.</p>") }
        let token = mintWebAuthToken(user: user, session: UUID().uuidString.lowercased())
        if let callback {
            let separator = callback.contains("?") ? "&" : "?"
            let location = callback + separator + "ckWebAuthToken=" + PercentEncoding.encodeQueryValue(token)
            return ServerResponse(status: 302, headers: [(name: "Location", value: location), (name: "Cache-Control", value: "no-store")], body: [])
        }
        // No callback: the opener (CloudKit JS) receives the token; it is not written on the page.
        let json = String(decoding: JSON.object(["ckWebAuthToken": .string(token)]).bytes, as: UTF8.self)
        return page(200, """
            <p>Signed in as \(Self.escape(user)). You can close this window.</p>
            <script>if (window.opener) { window.opener.postMessage(\(json), '*'); window.close(); }</script>
            """)
    }

    func callbackAllowed(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), let scheme = components.scheme, ["http", "https"].contains(scheme),
            let host = components.host
        else { return false }
        if ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) { return true }
        let origin = "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
        return configuration.allowedOrigins?.contains(origin) ?? false
    }

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
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
