"""Issue 28, row 5 (and row 15's copy): the terminal is never the attacker's.

A record whose STRING fields hold an OSC 52 clipboard write, an OSC 0 window title, a screen clear, a
C1 CSI (U+009B), a right-to-left override (U+202E), a zero-width space and a carriage return; a zone
and a subscription whose names hold such sequences; and a server whose error `reason` holds them. The
read commands (`get`, `query`, `changes`, `subscriptions`, `zones`) run on a real terminal (a pty) and
piped: no raw ESC, BEL, C1 or bidi character of the data may reach the output, the visible escape
(`\\e`, `\\u{202E}`, …) must be there instead, and JSON output must still parse to the exact strings.
Then the browser, in tmux, on the same record: the escapes are on screen and the window title is
untouched. Tokens are passed in the environment and never printed."""
import json, os, pty, re, select, shutil, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from common import *  # noqa: F401,F403

ESC, BEL = "\x1b", "\x07"
HOSTILE = {
    "osc52": ESC + "]52;c;cm0gLXJmIH4K" + BEL + "copied",
    "title": ESC + "]0;PWNED-TITLE" + BEL + "after",
    "clear": ESC + "[2J" + ESC + "[H" + "cleared",
    "csi": "\u009b2J" + "c1",
    "bidi": "abc\u202edcba",
    "zwsp": "zero\u200bwidth",
    "cr": "line\roverwritten",
}
# What the terminal may show instead (TerminalText's notation).
VISIBLE = {
    "osc52": "\\e]52;c;cm0gLXJmIH4K\\u{7}copied",
    "title": "\\e]0;PWNED-TITLE\\u{7}after",
    "clear": "\\e[2J\\e[Hcleared",
    "csi": "\\u{9B}2Jc1",
    "bidi": "abc\\u{202E}dcba",
    "zwsp": "zero\\u{200B}width",
    "cr": "line\\roverwritten",
}
ZONE = "zone" + ESC + "]0;ZONE-TITLE" + BEL + "\u202e"
SUBSCRIPTION = "sub" + ESC + "]0;SUB-TITLE" + BEL + "\u009b"
REASON = "bad " + ESC + "]0;REASON-TITLE" + BEL + ESC + "[2J\u009b\u202e reason"
# Raw bytes the data could put on a terminal. Our own output may hold "\r\x1b[K" (the progress line on
# stderr) and the pty turns "\n" into "\r\n"; nothing else with an ESC.
FORBIDDEN = [b"\x07", "\u009b".encode(), "\u202e".encode(), "\u200b".encode(), b"\xc2\x80", b"\xc2\x9f"]

checks = Checks("terminal")


def raw_leaks(data):
    """The forbidden bytes in terminal output, after removing our own progress line escapes."""
    cleaned = data.replace(b"\r\x1b[K", b"")
    leaks = [b for b in FORBIDDEN if b in cleaned]
    if b"\x1b" in cleaned:
        i = cleaned.index(b"\x1b")
        leaks.append(cleaned[max(0, i - 10):i + 12])
    return leaks


def run_tty(args, env, timeout=60):
    """Runs the CLI with stdin, stdout and stderr on one pty (a real terminal); returns (status, bytes)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            # Drain what is left.
            try:
                while True:
                    ready, _, _ = select.select([master], [], [], 0.2)
                    if not ready:
                        break
                    chunk = os.read(master, 65536)
                    if not chunk:
                        break
                    out += chunk
            except OSError:
                pass
            break
    os.close(master)
    try:
        status = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        status = -9
    return status, out


def run_pipe(args, env):
    p = subprocess.run(args, env=env, capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def strings_in(value, found):
    """Every string in a JSON value (keys too)."""
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, list):
        for v in value:
            strings_in(v, found)
    elif isinstance(value, dict):
        for k, v in value.items():
            found.add(k)
            strings_in(v, found)
    return found


def json_documents(data):
    """JSON lines (or one document) from output: parsed values, or None if anything is not JSON."""
    data = re.sub(rb"\r\x1b\[K(?:\d+ records?\xe2\x80\xa6)?", b"", data)  # the progress line (stderr, same pty)
    text = data.decode("utf-8").replace("\r\n", "\n").strip()
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    try:
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    except ValueError:
        return None


def check_terminal(name, data, expected_visible):
    leaks = raw_leaks(data)
    checks.check(not leaks, f"{name}: no raw ESC/BEL/C1/bidi byte of the data reaches the terminal", repr(leaks[:3]))
    text = data.decode("utf-8", "replace")
    missing = [v for v in expected_visible if v not in text]
    checks.check(not missing, f"{name}: the visible escapes are shown instead", f"missing {missing[:2]!r} in {text[:300]!r}")


def check_json(name, data, expected_strings):
    docs = json_documents(data)
    if not checks.check(docs is not None, f"{name}: still valid JSON", repr(data[:200])):
        return
    found = set()
    for d in docs:
        strings_in(d, found)
    missing = [s for s in expected_strings if s not in found]
    checks.check(not missing, f"{name}: the JSON parses to the exact original strings", f"missing {missing[:2]!r}")


class HostileServer(BaseHTTPRequestHandler):
    """A server that lies: zones/list names a zone with escape sequences (`ckbrowse serve` refuses such
    names); every other request is answered 400 with a reason a terminal would obey."""

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        status = 400
        body = json.dumps({"uuid": "hostile-uuid", "serverErrorCode": "BAD_REQUEST", "reason": REASON}).encode()
        if self.path.split("?")[0].endswith("/zones/list"):
            status = 200
            body = json.dumps({"zones": [{"zoneID": {"zoneName": ZONE, "ownerRecordName": "_owner" + ESC + "[2J"}, "atomic": True}]}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


def seed(server):
    c = Client(server.port)
    record = {"recordName": "hostile", "recordType": "Hostile",
              "fields": {k: {"value": v, "type": "STRING"} for k, v in HOSTILE.items()}}
    status, body = c.call("public", "records/modify", {"operations": [{"operationType": "create", "record": record}]})
    assert status == 200 and "serverErrorCode" not in body["records"][0], (status, body)
    status, body = c.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": ZONE}}}]})
    zone_ok = status == 200 and "serverErrorCode" not in body["zones"][0]
    zone = ZONE if zone_ok else "Hostile"
    if not zone_ok:
        print("note: `serve` refuses a zone name with controls (invalid zone name): a plain zone here, the lying server names one")
        c.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": zone}}}]})
    status, body = c.call("private", "records/modify", {"zoneID": {"zoneName": zone},
                                                         "operations": [{"operationType": "create", "record": record}]})
    assert status == 200 and "serverErrorCode" not in body["records"][0], (status, body)
    subscription = {"subscriptionID": SUBSCRIPTION, "subscriptionType": "query", "query": {"recordType": "Hostile"},
                    "firesOn": ["create", "update"]}
    status, body = c.call("public", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": subscription}]})
    sub_ok = status == 200 and "serverErrorCode" not in (body.get("subscriptions") or [{}])[0]
    if not sub_ok:
        print(f"note: the server refuses a subscription ID with controls ({body})")
    return zone_ok, sub_ok, zone


def main():
    bin_path = binary()
    # Queries without the schema's index rules: the record type is created just in time.
    server = Server(extra=["--no-index-rules"])
    server.start()
    work = tempfile.mkdtemp(prefix="ckb-term-")
    error_server = ThreadingHTTPServer(("127.0.0.1", 0), HostileServer)
    threading.Thread(target=error_server.serve_forever, daemon=True).start()
    try:
        zone_ok, sub_ok, zone = seed(server)
        env = dict(os.environ, LANG="C.UTF-8", TERM="xterm-256color", COLUMNS="400", HOME=work,
                   XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_CACHE_HOME=os.path.join(work, "cache"),
                   XDG_STATE_HOME=os.path.join(work, "state"),
                   CLOUDKIT_SERVER=f"http://127.0.0.1:{server.port}", CLOUDKIT_CONTAINER=CONTAINER,
                   CLOUDKIT_ENVIRONMENT="development", CLOUDKIT_DATABASE="public",
                   CLOUDKIT_API_TOKEN=API_TOKEN, CLOUDKIT_WEB_AUTH_TOKEN=USERS["alice"])
        env.pop("CKBROWSE_PROFILE", None)
        private = ["--database", "private"]
        commands = {
            "get": ["get", "hostile"],
            "query": ["query", "Hostile"],
            "changes": private + ["changes", zone, "--all"],
        }
        values = list(HOSTILE.values())
        shown = list(VISIBLE.values())
        for name, args in commands.items():
            status, out = run_tty([bin_path] + args, env)
            checks.check(status == 0, f"{name} on a terminal: exit 0", f"exit {status}: {out[:300]!r}")
            check_terminal(f"{name} (table on a terminal)", out, shown)
            status, out = run_tty([bin_path] + args + ["--output", "json"], env)
            check_terminal(f"{name} --output json on a terminal", out, [])
            check_json(f"{name} --output json on a terminal", out, values)
            status, out, err = run_pipe([bin_path] + args, env)
            checks.check(status == 0, f"{name} piped: exit 0", f"exit {status}")
            check_terminal(f"{name} (JSON lines piped)", out + err, [])
            check_json(f"{name} (JSON lines piped)", out, values)
            status, out, err = run_pipe([bin_path] + args + ["--json"], env)
            check_json(f"{name} --json piped", out, values)
            check_terminal(f"{name} --json piped", out, [])
            status, out, err = run_pipe([bin_path] + args + ["--output", "table"], env)
            check_terminal(f"{name} --output table piped", out + err, shown)

        # Zones: a zone name with escape sequences (from the lying server when `serve` refuses them).
        bad_env = dict(env, CLOUDKIT_SERVER=f"http://127.0.0.1:{error_server.server_address[1]}")
        zones_env = env if zone_ok else bad_env
        status, out = run_tty([bin_path] + private + ["zones"], zones_env)
        checks.check(status == 0, "zones on a terminal: exit 0", f"exit {status}: {out[:300]!r}")
        check_terminal("zones on a terminal", out, ["zone\\e]0;ZONE-TITLE\\u{7}\\u{202E}"])
        status, out, err = run_pipe([bin_path] + private + ["zones"], zones_env)
        check_json("zones piped", out, [ZONE])
        check_terminal("zones piped", out + err, [])
        status, out = run_tty([bin_path] + private + ["zones", "--json"], zones_env)
        check_json("zones --json on a terminal", out, [ZONE])
        check_terminal("zones --json on a terminal", out, [])

        # Subscriptions: the hostile ID, listed and shown.
        status, out = run_tty([bin_path, "subscriptions"], env)
        check_terminal("subscriptions on a terminal", out, ["sub\\e]0;SUB-TITLE\\u{7}\\u{9B}"] if sub_ok else [])
        if sub_ok:
            status, out = run_tty([bin_path, "subscriptions", SUBSCRIPTION], env)
            check_terminal("subscriptions ID on a terminal (the whole definition)", out, [])
            check_json("subscriptions ID on a terminal", out, [SUBSCRIPTION])
        status, out, err = run_pipe([bin_path, "subscriptions"], env)
        check_json("subscriptions piped", out, [SUBSCRIPTION] if sub_ok else [])
        check_terminal("subscriptions piped", out + err, [])

        # An error line: a server's reason with escape sequences.
        for name, args in [("get", ["get", "x"]), ("subscriptions", ["subscriptions"])]:
            status, out = run_tty([bin_path] + args, bad_env)
            checks.check(status != 0, f"error line ({name}): the command fails", f"exit {status}")
            check_terminal(f"error line ({name}) on a terminal", out, ["\\e]0;REASON-TITLE\\u{7}\\e[2J\\u{9B}\\u{202E} reason"])
            status, out, err = run_pipe([bin_path] + args, bad_env)
            check_terminal(f"error line ({name}) piped", err, ["\\e]0;REASON-TITLE\\u{7}"])

        browser(bin_path, env, work)
    finally:
        error_server.shutdown()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    checks.done()


def browser(bin_path, env, work):
    """The browser on the hostile record in tmux: escapes on screen, the pane's title unchanged."""
    if not shutil.which("tmux"):
        print("note: no tmux: the browser check is skipped")
        return
    sock = f"ckb-sec-term-{os.getpid()}"
    conf = os.path.join(work, "tmux.conf")
    with open(conf, "w") as f:
        f.write("set -g default-terminal tmux-256color\nset -g remain-on-exit on\nset -g status off\nset -g set-clipboard on\n")
    keep = ["LANG", "TERM", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "CLOUDKIT_SERVER", "CLOUDKIT_CONTAINER",
            "CLOUDKIT_ENVIRONMENT", "CLOUDKIT_DATABASE", "CLOUDKIT_API_TOKEN", "CLOUDKIT_WEB_AUTH_TOKEN"]
    envfile = os.path.join(work, "browser.env")
    with open(envfile, "w") as f:
        for k in keep:
            f.write(f"export {k}='{env[k]}'\n")
    os.chmod(envfile, 0o600)

    def tmux(*args):
        return subprocess.run(["tmux", "-L", sock] + list(args), capture_output=True, text=True)

    def screen():
        return tmux("capture-pane", "-p").stdout

    def wait_for(text, seconds=20):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if text in screen():
                return True
            time.sleep(0.1)
        return False

    try:
        tmux("-f", conf, "new-session", "-d", "-x", "120", "-y", "30", f". {envfile}; exec {bin_path}")
        tmux("select-pane", "-T", "ckb-original-title")
        # The public database's default zone, then the record.
        opened = wait_for("_defaultZone")
        checks.check(opened, "browser: the public database's zones are shown", screen()[-300:])
        tmux("send-keys", "Enter")
        wait_for("no change feed")
        tmux("send-keys", ":", "query Hostile", "Enter")
        if wait_for("y sends it anyway", 5):  # the schema has no indexes: the browser asks first
            tmux("send-keys", "y")
        checks.check(wait_for("1 loaded"), "browser: the hostile record is listed", screen())
        tmux("send-keys", "Enter")
        checks.check(wait_for("FIELDS"), "browser: the record's detail opens", screen()[-300:])
        detail = screen()
        for key in ["title", "bidi", "zwsp", "cr", "csi"]:
            checks.check(VISIBLE[key] in detail, f"browser: the {key} field shows its escapes ({VISIBLE[key]})", detail)
        title = tmux("display", "-p", "#{pane_title}").stdout.strip()
        checks.check("PWNED" not in title, "browser: the window title is untouched", title)
        buffers = tmux("list-buffers").stdout
        checks.check("cm0gLXJmIH4K" not in buffers and "rm -rf" not in buffers, "browser: the clipboard (tmux buffers) is untouched", buffers)
        # y copies the selected field (the first: bidi) as JSON through OSC 52 into a tmux buffer.
        tmux("send-keys", "y")
        deadline = time.time() + 10
        copied = ""
        while time.time() < deadline and not copied:
            copied = tmux("show-buffer").stdout
            time.sleep(0.1)
        checks.check("\\u202e" in copied and "\u202e" not in copied, "browser: y copies JSON with U+202E as \\u202e", repr(copied[:200]))
        # The record as JSON (`v`), with invisible characters as \uXXXX.
        tmux("send-keys", "v")
        checks.check(wait_for("\\u202e"), "browser: the raw JSON view writes U+202E as \\u202e", screen())
        tmux("send-keys", "q")
    finally:
        tmux("kill-server")


if __name__ == "__main__":
    main()
