"""The threat model's server rows (SERVER.md, "Threat model"; issue 28 rows 1-4 and 9-15), each tried
as an attacker would against the real `ckbrowse serve` on loopback. Every check here failed on the
server before issue 28. Tokens are never printed."""
import http.client, json, os, re, shutil, socket, sqlite3, stat, subprocess, sys, tempfile, time, urllib.parse

from common import Checks, binary, free_port, wait_listening

from fixture import ALICE, API, BOB, C, SCHEMA, Serve, schema_file, standard, upload, work

checks = Checks("server")

# ---------------------------------------------------------------- rows 1, 2: sign-in
data = os.path.join(work, "data")
s = standard(data)
try:
    evil_callback = "http://evil.example\\@127.0.0.1/"
    status, body, h = s.request("GET", "/signin?" + urllib.parse.urlencode({"container": C, "callback": evil_callback}))
    checks.check(status == 400, "row 1: a callback a browser reads as evil.example (backslash, userinfo) is refused", f"{status}")
    for trick in ["http://127.0.0.1@evil.example/", "http://evil%2eexample/", "http://0x7f.1@evil.example/", " http:\\\\evil.example/"]:
        status, _, _ = s.request("GET", "/signin?" + urllib.parse.urlencode({"container": C, "callback": trick}))
        checks.check(status == 400, f"row 1: callback {trick!r} is refused", f"{status}")
    status, body, h = s.request("POST", "/signin", urllib.parse.urlencode(
        {"container": C, "callback": evil_callback, "user": "alice"}).encode(), {"Content-Type": "application/x-www-form-urlencoded"})
    checks.check(status != 302 and "evil" not in h.get("location", ""), "row 1: POST /signin with that callback mints nothing", f"{status}")
    # A legitimate callback: the page's form, then a 302 to the loopback callback.
    status, page, _ = s.request("GET", "/signin?" + urllib.parse.urlencode({"container": C, "callback": "http://localhost:9/back"}))
    form = re.search(rb'name="form" value="([^"]+)"', page)
    checks.check(status == 200 and form is not None, "row 1: the sign-in page carries a signed form nonce")
    fields = {"container": C, "callback": "http://localhost:9/back", "origin": "", "user": "alice", "form": form.group(1).decode() if form else ""}
    status, _, h = s.request("POST", "/signin", urllib.parse.urlencode(fields).encode(), {"Content-Type": "application/x-www-form-urlencoded",
                                                                                     "Origin": f"http://127.0.0.1:{s.port}", "Host": f"127.0.0.1:{s.port}"})
    checks.check(status == 302 and h.get("location", "").startswith("http://localhost:9/back?ckWebAuthToken="),
                 "row 1: the page's own form signs in and goes to a loopback callback", f"{status}")
    minted = urllib.parse.parse_qs(urllib.parse.urlsplit(h.get("location", "")).query).get("ckWebAuthToken", [""])[0]
    status, answer, _ = s.call("private", "zones/list", method="GET", token=minted)
    checks.check(status == 200, "row 1: the minted token works", f"{status}")
    # Row 2: another site's page posting the form.
    for origin in ["https://evil.example", "null"]:
        status, body, h = s.request("POST", "/signin", urllib.parse.urlencode(fields).encode(),
                                    {"Content-Type": "application/x-www-form-urlencoded", "Origin": origin})
        checks.check(status == 403 and "access-control-allow-origin" not in h and b"ckWebAuthToken" not in body and b"ckSession" not in body,
                     f"row 2: POST /signin from Origin {origin} is refused, with no CORS", f"{status}")
    fields_without_nonce = dict(fields, form="")
    status, body, h = s.request("POST", "/signin", urllib.parse.urlencode(fields_without_nonce).encode(), {"Content-Type": "application/x-www-form-urlencoded"})
    checks.check(status == 403 and "location" not in h, "row 2: a form without the page's nonce (a cross-site form) mints nothing", f"{status}")
    status, body, _ = s.request("GET", "/signin?" + urllib.parse.urlencode({"container": C, "origin": "https://evil.example"}))
    checks.check(status == 400, "row 2: the page will not hand a token to another site's opener", f"{status}")
    # The popup flow: the token goes to the opener's origin only, never '*', under ckSession and ckWebAuthToken.
    status, page, _ = s.request("GET", "/signin?" + urllib.parse.urlencode({"container": C, "origin": "http://localhost:8080"}))
    form = re.search(rb'name="form" value="([^"]+)"', page).group(1).decode()
    status, body, h = s.request("POST", "/signin", urllib.parse.urlencode({"container": C, "callback": "", "origin": "http://localhost:8080",
                                "user": "alice", "form": form}).encode(), {"Content-Type": "application/x-www-form-urlencoded"})
    text = body.decode()
    checks.check(status == 200 and "'*'" not in text and '"*"' not in text and '"http://localhost:8080"' in text and "ckSession" in text,
                 "row 2 / issue 29.1: postMessage goes to the opener's origin only, with ckSession", f"{status}")
    checks.check(h.get("x-frame-options") == "DENY" and "access-control-allow-origin" not in h, "row 2: the sign-in page cannot be framed and has no CORS")
    # A 421 from a page's request names that page's origin for the popup.
    status, answer, _ = s.call("private", "zones/list", method="GET", token=None, headers={"Origin": "http://localhost:8080"})
    checks.check(status == 421 and "origin=http%3A%2F%2Flocalhost%3A8080" in (answer or {}).get("redirectURL", ""),
                 "issue 29.1: the redirectURL of a page's 421 names the page's origin", f"{status}")

    # ------------------------------------------------------------ row 3: rereference needs READ
    path, status, single = upload(s, BOB, "Secret", "secret-1")
    status, answer, _ = s.call("public", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordName": "secret-1", "recordType": "Secret", "fields": {"file": {"value": {
            "fileChecksum": single["singleFile"]["fileChecksum"], "size": single["singleFile"]["size"], "receipt": single["singleFile"]["receipt"]}}}}}]},
        token=BOB)
    checks.check(status == 200 and "serverErrorCode" not in answer["records"][0], "setup: bob (Moderator) saves a Secret with an asset", json.dumps(answer)[:200])
    status, answer, _ = s.call("public", "assets/rereference", {"zoneID": {"zoneName": "_defaultZone"},
                                "assets": [{"recordName": "secret-1", "fieldName": "file"}]}, token=ALICE)
    entry = (answer or {}).get("assets", [{}])[0]
    checks.check("receipt" not in entry and entry.get("serverErrorCode") == "ACCESS_DENIED",
                 "row 3: assets/rereference of a record the caller may not READ gives no receipt", json.dumps(entry)[:200])
    status, answer, _ = s.call("public", "assets/rereference", {"zoneID": {"zoneName": "_defaultZone"},
                                "assets": [{"recordName": "secret-1", "fieldName": "file"}]}, token=BOB)
    checks.check("receipt" in (answer or {}).get("assets", [{}])[0], "row 3: a reader with READ still gets one")

    # ------------------------------------------------------------ row 13: upload URLs are single use
    status, again, _ = s.request("POST", path, b"other bytes")
    checks.check(status == 403, "row 13: a second POST to an upload URL is refused", f"{status}")

    # ------------------------------------------------------------ row 12: download URLs
    p2, status, single = upload(s, ALICE, "Note", "note-1", b"note bytes")
    status, answer, _ = s.call("public", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordName": "note-1", "recordType": "Note", "fields": {"file": {"value": {
            "fileChecksum": single["singleFile"]["fileChecksum"], "size": single["singleFile"]["size"], "receipt": single["singleFile"]["receipt"]}}}}}]})
    tag = answer["records"][0]["recordChangeTag"]
    status, answer, _ = s.call("public", "records/lookup", {"records": [{"recordName": "note-1"}]})
    url = answer["records"][0]["fields"]["file"]["value"]["downloadURL"].replace("${f}", "note.txt")
    status, body, _ = s.request("GET", urllib.parse.urlsplit(url).path)
    checks.check(status == 200 and body == b"note bytes", "row 12: a fresh download URL answers the file")
    s.call("public", "records/modify", {"operations": [{"operationType": "delete", "record": {"recordName": "note-1", "recordChangeTag": tag}}]})
    status, body, _ = s.request("GET", urllib.parse.urlsplit(url).path)
    checks.check(status in (403, 404) and body != b"note bytes", "row 12: once the record is deleted its download URL stops working", f"{status}")
    forged = urllib.parse.urlsplit(url).path.replace("/assets/1/", "/assets/1/A")
    status, _, _ = s.request("GET", forged)
    checks.check(status in (403, 404), "row 12: an altered download URL answers nothing", f"{status}")

    # ------------------------------------------------------------ row 15: Content-Disposition
    p3, status, single = upload(s, ALICE, "Note", "note-2", b"two")
    status, answer, _ = s.call("public", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordName": "note-2", "recordType": "Note", "fields": {"file": {"value": {
            "fileChecksum": single["singleFile"]["fileChecksum"], "size": single["singleFile"]["size"], "receipt": single["singleFile"]["receipt"]}}}}}]})
    status, answer, _ = s.call("public", "records/lookup", {"records": [{"recordName": "note-2"}]})
    url = urllib.parse.urlsplit(answer["records"][0]["fields"]["file"]["value"]["downloadURL"]).path
    for name in ["../../etc/passwd", "evil\u202etxt.exe", "a\r\nSet-Cookie: x=1"]:
        status, _, h = s.request("GET", url.replace("${f}", urllib.parse.quote(name, safe="")))
        cd = h.get("content-disposition", "")
        checks.check(status == 200 and "/" not in cd.split("filename=")[1].split(";")[0] and "\u202e" not in cd and "\r" not in cd and "Set-Cookie" not in "".join(h),
                     f"row 15: Content-Disposition for {name!r} is a safe file name", cd)

    # ------------------------------------------------------------ row 15: names
    for sid, what in [("a\u0000b", "NUL"), ("a\u001b[2Jb", "ESC"), ("x" * 10000, "10 kB")]:
        status, answer, _ = s.call("private", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": {
            "subscriptionID": sid, "subscriptionType": "zone", "zoneID": {"zoneName": "_defaultZone"}}}]})
        item = (answer or {}).get("subscriptions", [{}])[0]
        checks.check(item.get("serverErrorCode") == "BAD_REQUEST" and "subscriptionID" in item.get("reason", ""),
                      f"row 15: a subscription ID with {what} is refused with its reason", json.dumps(item)[:160])
    for rtype, what in [("Bad\u0000Type", "NUL"), ("T" * 300, "300 characters")]:
        status, answer, _ = s.call("private", "records/modify", {"operations": [{"operationType": "create", "record": {
            "recordName": "r-" + what.replace(" ", ""), "recordType": rtype, "fields": {}}}]})
        reason = ((answer or {}).get("records") or [{}])[0].get("reason", "")
        checks.check("is required" not in reason and "recordType" in reason and ("control" in reason or "bytes" in reason),
                     f"row 15: a recordType with {what} gets a reason that says so", reason[:160])

    # ------------------------------------------------------------ row 14: another user's push token
    status, created, _ = s.request("POST", f"/device/1/{C}/development/tokens/create?" + urllib.parse.urlencode({"ckAPIToken": API, "ckWebAuthToken": ALICE}),
                                   json.dumps({"apnsEnvironment": "development"}).encode())
    push = json.loads(created)["apnsToken"]
    status, body, _ = s.request("POST", f"/device/1/{C}/development/tokens/register?" + urllib.parse.urlencode({"ckAPIToken": API, "ckWebAuthToken": BOB}),
                                json.dumps({"apnsEnvironment": "development", "apnsToken": push}).encode())
    checks.check(status == 403, "row 14: bob cannot register alice's push token", f"{status}")
    status, body, _ = s.request("POST", f"/device/1/{C}/development/tokens/register?" + urllib.parse.urlencode({"ckAPIToken": API, "ckWebAuthToken": ALICE}),
                                json.dumps({"apnsEnvironment": "development", "apnsToken": push}).encode())
    checks.check(status == 200, "row 14: alice still registers her own", f"{status}")

    # ------------------------------------------------------------ row 11: origins, Host, admin
    status, answer, h = s.call("private", "records/modify", json.dumps({"operations": [{"operationType": "create", "record": {
        "recordName": "from-evil", "recordType": "Note", "fields": {}}}]}).encode(), headers={"Origin": "https://evil.example", "Content-Type": "text/plain"})
    checks.check(status == 403 and "access-control-allow-origin" not in h, "row 11: a text/plain POST from a foreign origin is refused before it runs", f"{status}")
    status, answer, _ = s.call("private", "records/lookup", {"records": [{"recordName": "from-evil"}]})
    checks.check(answer["records"][0].get("serverErrorCode") == "NOT_FOUND", "row 11: and wrote nothing")
    status, answer, h = s.call("private", "zones/list", method="GET", headers={"Origin": "http://localhost:3000"})
    checks.check(status == 200 and h.get("access-control-allow-origin") == "http://localhost:3000", "row 11: a page served from this machine still works (CORS)", f"{status}")
    status, _, _ = s.request("POST", f"/admin/1/{C}/development/reset?ckAPIToken={API}", b"", {"Origin": "http://localhost:3000", "Content-Type": "text/plain"})
    checks.check(status == 403, "row 11: a web page cannot drive the admin reset, even from an allowed origin", f"{status}")
    status, _, _ = s.request("POST", f"/schema/1/{C}/development/import?ckAPIToken={API}", SCHEMA.encode(), {"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Site": "cross-site"})
    checks.check(status == 403, "row 11: nor the schema import (a no-cors fetch)", f"{status}")
    status, _, _ = s.call("private", "zones/list", method="GET", headers={"Host": "evil.example"})
    checks.check(status == 403, "row 11: a foreign Host (DNS rebinding) is refused", f"{status}")
    status, _, _ = s.call("private", "zones/list", method="GET", headers={"Host": f"localhost:{s.port}"})
    checks.check(status == 200, "row 11: Host localhost is fine", f"{status}")
    # Requests that stopped the whole server until issue 33: a query parameter with an empty name
    # (`?=`), and a Host whose "digits" are numbers but not ASCII ones (`½`, Arabic-Indic). Each is
    # answered, and the server goes on serving.
    for query in ["=", "=x", "&=&", "ckAPIToken=" + API + "&="]:
        status, _, _ = s.request("GET", f"/database/1/{C}/development/private/zones/list?{query}")
        checks.check(400 <= status < 500, f"issue 33: a query '?{query.replace(API, 'API')}' is answered with an error", f"{status}")
    for host in ["\u00bd.1.1.1", "\u0661.\u0661.\u0661.\u0661:80"]:
        status, _, _ = s.call("private", "zones/list", method="GET", headers={"Host": host.encode()})
        checks.check(status == 403, f"issue 33: a Host of non-ASCII digits ({host.encode()!r}) is refused", f"{status}")
    status, _, _ = s.request("GET", "/ready")
    checks.check(status == 200, "issue 33: and the server is still there", f"{status}")

    # ------------------------------------------------------------ a refused request's body is never read
    # A page elsewhere (an Origin the policy refuses) announcing a 16 MB body is answered from its head
    # alone; the connection closes once what it sent is drained, so the server never holds the bytes.
    def vm_rss_mb():
        status_file = f"/proc/{s.proc.pid}/status"
        if not os.path.exists(status_file): return 0
        return int(open(status_file).read().split("VmRSS:")[1].split()[0]) / 1024
    def announce(sock, origin="https://evil.example", host=None):
        sock.sendall((f"POST /database/1/{C}/development/public/records/query HTTP/1.1\r\nHost: {host or f'127.0.0.1:{s.port}'}\r\n"
                      f"Origin: {origin}\r\nContent-Type: text/plain\r\nContent-Length: 16777216\r\n\r\n").encode())
    before = vm_rss_mb()
    sockets, heads = [], []
    for _ in range(8):
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        announce(sock)
        try: sock.sendall(b"x" * (16777216 - 1))
        except OSError: pass
        sockets.append(sock)
    time.sleep(0.5)
    grown = vm_rss_mb() - before
    checks.check(grown < 48, "eight such bodies sent in full do not grow the server (they are dropped as they arrive)", f"{grown:.0f} MB")
    for sock in sockets:
        sock.settimeout(1)
        try:
            heads.append(sock.recv(65536))
        except OSError:
            heads.append(b"")
    checks.check(all(h.startswith(b"HTTP/1.1 403") and b"access-control-allow-origin" not in h.lower() and b"connection: close" in h.lower() for h in heads),
                 "a refused origin's 16 MB POST is answered 403 from its head, without CORS", repr([h[:30] for h in heads]))
    def closes(sock):
        try:
            sock.sendall(b"x")
            sock.settimeout(5)
            return sock.recv(100) == b""
        except OSError:
            return True
        finally:
            sock.close()
    checks.check(all([closes(sock) for sock in sockets]), "and each connection closes once its body is drained")
    # A client that half-closes mid-body after its refusal gets that one answer (the decoder's error at
    # the cut body once made the responder answer a request it never saw: a second, 400, answer).
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    sock.sendall((f"POST /database/1/{C}/development/public/records/query HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\n"
                  "Origin: https://evil.example\r\nContent-Length: 100\r\n\r\nabc").encode())
    sock.shutdown(socket.SHUT_WR)
    answered = b""
    try:
        while chunk := sock.recv(65536): answered += chunk
    except OSError:
        pass
    sock.close()
    checks.check(answered.count(b"HTTP/1.1 ") == 1 and answered.startswith(b"HTTP/1.1 403"),
                 "a refused request cut short by its client gets one answer", repr(answered[:200]))
    # A body over the limit from an allowed page: its error carries CORS, so the page can read it.
    status, body, h = s.request("POST", f"/database/1/{C}/development/public/records/query?ckAPIToken={API}", b" " * (16 * 1024 * 1024 + 1),
                                {"Origin": "http://localhost:8080", "Content-Type": "application/json"})
    checks.check(status == 400 and b'"BAD_REQUEST"' in body and h.get("access-control-allow-origin") == "http://localhost:8080",
                 "an allowed page's body over the limit gets its BAD_REQUEST with CORS headers", f"{status} {h.get('access-control-allow-origin')}")
    status, body, h = s.request("POST", f"/database/1/{C}/development/public/records/query?ckAPIToken={API}", b" " * (16 * 1024 * 1024 + 1),
                                {"Host": "rebound.example", "Content-Type": "application/json"})
    checks.check(status == 403 and b'"ACCESS_DENIED"' in body, "a foreign Host's body over the limit is refused as foreign (403)", f"{status}")

    # ------------------------------------------------------------ row 9: file modes
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)
    checks.check(mode(data) == 0o700, "row 9: the data directory is 0700", oct(mode(data)))
    for name in ["cloudkit.sqlite", "cloudkit.sqlite-wal", "cloudkit.sqlite-shm"]:
        p = os.path.join(data, name)
        if os.path.exists(p):
            checks.check(mode(p) == 0o600, f"row 9: {name} is 0600", oct(mode(p)))
finally:
    s.stop()

# ---------------------------------------------------------------- row 4: credentials are what the flags say now
s = Serve(data, ["--api-token", f"other-token@{C}", "--user", f"alice:{ALICE}-changed", "--container", C, "--web-token-lifetime", "3"])
try:
    status, _, _ = s.call("private", "zones/list", method="GET", token=None)
    checks.check(status == 401, "row 4: an API token removed from the flags stops working at restart", f"{status}")
    status, _, _ = s.call("private", "zones/list", method="GET", api="other-token", token=BOB)
    checks.check(status == 421, "row 4: a removed user's token stops working", f"{status}")
    status, _, _ = s.call("private", "zones/list", method="GET", api="other-token", token=ALICE)
    checks.check(status == 421, "row 4: a user's old token stops working once it is changed", f"{status}")
    status, _, _ = s.call("private", "zones/list", method="GET", api="other-token", token=minted)
    checks.check(status == 421, "row 4: tokens minted under the old one are revoked too", f"{status}")
    status, _, _ = s.request("POST", f"/admin/1/{C}/development/reset?ckAPIToken={API}", b"")
    checks.check(status == 401, "row 4: the admin reset with the old API token is refused", f"{status}")
    status, page, _ = s.request("GET", "/signin?container=" + C)
    checks.check(b"bob" not in page, "row 4: the removed user is not offered on the sign-in page")
    status, _, h = s.call("private", "zones/list", method="GET", api="other-token", token=ALICE + "-changed")
    fresh = h.get("x-apple-cloudkit-web-auth-token", "")
    status2, _, _ = s.call("private", "zones/list", method="GET", api="other-token", token=fresh)
    time.sleep(4)
    status3, _, _ = s.call("private", "zones/list", method="GET", api="other-token", token=fresh)
    checks.check(status == 200 and status2 == 200 and status3 == 421, "row 4: a minted token expires (--web-token-lifetime)", f"{status} {status2} {status3}")
    conn = sqlite3.connect(os.path.join(data, "cloudkit.sqlite"))
    stored = sum(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ["api_token", "web_user", "server_key"])
    conn.close()
    checks.check(stored == 0, "row 4: no credential is kept in the data directory", f"{stored} rows")
finally:
    s.stop()

# ---------------------------------------------------------------- row 15: tokens out of argv
env = dict(os.environ, CK_SECRET_API=API, CK_SECRET_ALICE=ALICE)
s = Serve(None, ["--in-memory", "--api-token", f"env:CK_SECRET_API@{C}", "--user", "alice:env:CK_SECRET_ALICE"], env=env)
try:
    cmdline = open(f"/proc/{s.proc.pid}/cmdline", "rb").read()
    status, _, _ = s.call("private", "zones/list", method="GET")
    checks.check(status == 200 and API.encode() not in cmdline and ALICE.encode() not in cmdline,
                 "row 15: tokens given as env:VAR work and are not on the command line (ps)", f"{status}")
finally:
    s.stop()

# ---------------------------------------------------------------- rows 9, 10: snapshots
export = os.path.join(work, "export")
s = standard(os.path.join(work, "data2"), ["--export-on-exit", export])
s.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Kept"}}}]})
s.stop()
mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)
checks.check(mode(export) == 0o700 and mode(os.path.join(export, "cloudkit.sqlite")) == 0o600, "row 9: an exported snapshot is owner-only",
             f"{oct(mode(export))} {oct(mode(os.path.join(export, 'cloudkit.sqlite')))}")
conn = sqlite3.connect(os.path.join(export, "cloudkit.sqlite"))
secret = conn.execute("SELECT count(*) FROM setting WHERE key = 'token-secret'").fetchone()[0]
conn.close()
checks.check(secret == 0, "row 10: a snapshot does not carry the token secret unless asked")


def planted(name, sql):
    snap = os.path.join(work, name)
    shutil.copytree(export, snap)
    conn = sqlite3.connect(os.path.join(snap, "cloudkit.sqlite"))
    conn.executescript(sql)
    conn.commit()
    conn.close()
    return snap


def import_(snap, extra=()):
    port = free_port()
    proc = subprocess.Popen([binary(), "serve", "--in-memory", "--port", str(port), "--import", snap, "--api-token", f"{API}@{C}",
                             "--user", f"alice:{ALICE}"] + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_listening(proc, 60)  # a refused import exits: the caller reads its status
    return proc, port


snap = planted("with-credentials", "INSERT INTO api_token (token, container) VALUES ('planted-token', NULL); INSERT INTO web_user (token, name) VALUES ('planted-user', 'alice');")
def planted_status(extra):
    """The status of a request with the planted credentials, on a server that imported the snapshot."""
    proc, port = import_(snap, extra)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", f"/database/1/{C}/development/private/zones/list?ckAPIToken=planted-token&ckWebAuthToken=planted-user")
        return conn.getresponse().status
    finally:
        proc.terminate()
        proc.wait()


status = planted_status([])
checks.check(status == 401, "row 10: credentials planted in a snapshot do not work after --import", f"{status}")
status = planted_status(["--import-credentials"])
checks.check(status == 200, "row 10: they do with --import-credentials (asked for)", f"{status}")
for name, sql in [("trigger", "CREATE TRIGGER planted AFTER INSERT ON zone BEGIN INSERT INTO api_token VALUES ('t', NULL); END;"),
                  ("view", "CREATE VIEW planted AS SELECT * FROM zone;"),
                  ("table", "CREATE TABLE planted (x);")]:
    snap = planted("with-" + name, sql)
    proc, port = import_(snap)
    out, err = proc.communicate(timeout=30)
    checks.check(proc.returncode != 0 and b"refused" in err, f"row 10: a snapshot holding a {name} is refused", err.decode(errors="replace")[-200:])
snap = os.path.join(work, "linked")
shutil.copytree(export, snap)
os.remove(os.path.join(snap, "cloudkit.sqlite"))
os.symlink(os.path.join(export, "cloudkit.sqlite"), os.path.join(snap, "cloudkit.sqlite"))
proc, port = import_(snap)
out, err = proc.communicate(timeout=30)
checks.check(proc.returncode != 0 and b"link" in err, "row 10: a snapshot whose database is a symbolic link is refused", err.decode(errors="replace")[-200:])

# ---------------------------------------------------------------- issue 29.7: single-use tokens
s = standard(os.path.join(work, "data3"), ["--single-use-tokens"])
try:
    status, created, h = s.request("POST", f"/device/1/{C}/development/tokens/create?" + urllib.parse.urlencode({"ckAPIToken": API, "ckWebAuthToken": ALICE}),
                                   json.dumps({"apnsEnvironment": "development"}).encode())
    token = h.get("x-apple-cloudkit-web-auth-token")
    checks.check(status == 200 and token, "issue 29.7: tokens/create's answer carries the next token", f"{status}")
    status, answer, h = s.call("private", "records/lookup", {"bad": True}, token=token)
    checks.check(status == 400, "issue 29.7: (an error answer)", f"{status}")
    status, answer, h = s.call("private", "zones/list", method="GET", token=token)
    checks.check(status == 200, "issue 29.7: the token still works after an error answer (CloudKit JS adopts tokens from 2xx only)", f"{status}")
    status, answer, _ = s.call("private", "zones/list", method="GET", token=token)
    checks.check(status == 421, "issue 29.7: once a 2xx answer replaced it, it is spent", f"{status}")
finally:
    s.stop()

shutil.rmtree(work, ignore_errors=True)
checks.done()
