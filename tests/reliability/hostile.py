#!/usr/bin/env python3
"""Hostile responses: a stub server answers every request badly (truncated, malformed, wrong-typed,
enormous, slow, dropped, HTML, a 500 without a dictionary, a bogus status). `ckbrowse apply` (the
client module) must fail with a typed, one-line error within its timeout, never crash, never hang;
and the browser in tmux must show the error in its status bar and keep running."""
import os, socket, socketserver, subprocess, sys, tempfile, threading, time
from common import binary, free_port

MODES = ["truncated", "malformed", "wrongtyped", "enormous", "slow", "dropped", "html", "bare500", "bogusstatus", "emptybody"]


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        data = b""
        sock.settimeout(5)
        try:
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                data += chunk
        except Exception:
            return
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        mode = next((m for m in MODES if f"iCloud.mode.{m}/" in line), "malformed")

        def send(status, body, ctype="application/json", length=None):
            head = f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body) if length is None else length}\r\nConnection: close\r\n\r\n"
            sock.sendall(head.encode() + body)

        try:
            if mode == "truncated":
                send("200 OK", b'{"records": [{"recordName": "a", "recordT', length=5000)
            elif mode == "malformed":
                send("200 OK", b'{"records": [}}}')
            elif mode == "wrongtyped":
                send("200 OK", b'{"records": "not a list", "zones": 7}')
            elif mode == "enormous":
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 600000000\r\nConnection: close\r\n\r\n")
                chunk = b'{"records": [' + b"[" * 65536
                for _ in range(2000):  # up to 130 MB, until the client gives up
                    sock.sendall(chunk)
            elif mode == "slow":
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
                for _ in range(60):
                    sock.sendall(b" ")
                    time.sleep(1)
            elif mode == "dropped":
                pass  # close without a byte
            elif mode == "html":
                send("200 OK", b"<html><body>Gateway error</body></html>", ctype="text/html")
            elif mode == "bare500":
                send("500 Internal Server Error", b"oops", ctype="text/plain")
            elif mode == "bogusstatus":
                send("299 Whatever", b'{"records": []}')
            elif mode == "emptybody":
                send("200 OK", b"")
        except Exception:
            pass


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True


server = Server(("127.0.0.1", free_port()), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}"
work = tempfile.mkdtemp(prefix="ckhostile-")
batch = os.path.join(work, "b.json")
with open(batch, "w") as f:
    f.write('{"zoneID": {"zoneName": "Z"}, "operations": [{"operationType": "forceDelete", "record": {"recordName": "a"}}]}')
problems = []
results = []
for mode in MODES:
    env = dict(os.environ, CLOUDKIT_SERVER=url, CLOUDKIT_CONTAINER=f"iCloud.mode.{mode}", CLOUDKIT_DATABASE="private",
               CLOUDKIT_API_TOKEN="t", CLOUDKIT_WEB_AUTH_TOKEN="w", XDG_STATE_HOME=work, XDG_CACHE_HOME=work)
    started = time.time()
    try:
        r = subprocess.run([binary(), "apply", batch], env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        problems.append(f"{mode}: hung (no exit within 60 s)")
        continue
    elapsed = time.time() - started
    err = r.stderr.strip().splitlines()
    results.append((mode, r.returncode, elapsed, err[-1] if err else ""))
    if r.returncode >= 128 or r.returncode == 0:
        problems.append(f"{mode}: exit status {r.returncode}")
    if not err or not err[-1].startswith("ckbrowse: ") or "Fatal error" in r.stderr:
        problems.append(f"{mode}: no one-line typed error: {r.stderr[-200:]!r}")
for mode, code, elapsed, line in results:
    print(f"hostile: {mode:12s} exit {code} after {elapsed:5.1f} s: {line[:110]}")

# The browser against a malformed server: the error is in the status bar and the browser keeps running.
sock = f"ckb-hostile-{os.getpid()}"
conf = os.path.join(work, "tmux.conf")
with open(conf, "w") as f:
    f.write("set -g default-terminal tmux-256color\nset -g remain-on-exit on\nset -g status off\n")
for mode in ["malformed", "truncated", "dropped"]:
    sock = f"ckb-hostile-{os.getpid()}-{mode}"  # a fresh tmux server each time (reusing a socket races)
    cmd = (f"env LANG=C.UTF-8 TERM=tmux-256color XDG_CACHE_HOME={work} XDG_STATE_HOME={work} CLOUDKIT_SERVER={url} "
           f"CLOUDKIT_CONTAINER=iCloud.mode.{mode} CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN=t CLOUDKIT_WEB_AUTH_TOKEN=w {binary()}")
    subprocess.run(["tmux", "-L", sock, "-f", conf, "new-session", "-d", "-x", "100", "-y", "30", cmd], check=True)
    screen = ""
    for _ in range(150):
        screen = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True, text=True).stdout
        last = screen.rstrip("\n").splitlines()[-1] if screen.strip() else ""
        if "│" in last:
            break
        time.sleep(0.1)
    last = screen.rstrip("\n").splitlines()[-1] if screen.strip() else ""
    dead = subprocess.run(["tmux", "-L", sock, "display", "-p", "#{pane_dead}"], capture_output=True, text=True).stdout.strip()
    print(f"hostile: browser vs {mode}: status bar: {last.strip()[:100]}")
    if "│" not in last or dead != "0":
        problems.append(f"browser vs {mode}: no error in the status bar or the browser died (dead={dead}): {last!r}")
    subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
server.shutdown()
for p in problems:
    print("  " + p)
print("hostile: PASS" if not problems else "hostile: FAIL")
sys.exit(0 if not problems else 1)
