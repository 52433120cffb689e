#!/usr/bin/env python3
"""Signs in on `ckbrowse serve`'s sign-in page in a real browser, as a person does: Debian's chromium,
headless, driven over the Chrome DevTools Protocol (a WebSocket client of the standard library's
sockets below, so the test needs no package), opens /signin with a callback, clicks "Sign in as USER"
and follows the form to wherever the server sends it.

Usage: browser_signin.py CHROMIUM SERVER_URL CONTAINER USER CALLBACK API_TOKEN WORK_DIR

Prints what a test checks, never the token itself:
    origin: the Origin header the browser sent with the form's POST (or "absent")
    landed: callback | elsewhere: <the page's text, cut>
    token: zones/list <status>   (the token the callback received, used once against the server)
"""
import base64, json, os, socket, struct, subprocess, sys, tempfile, time, urllib.error, urllib.parse, urllib.request

chromium, server, container, user, callback, api_token, work = sys.argv[1:8]


class WebSocket:
    """Just enough of RFC 6455 for DevTools: text frames out (masked), frames in (unmasked)."""

    def __init__(self, url):
        host_port, path = url[len("ws://"):].split("/", 1)
        host, port = host_port.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            byte = self.sock.recv(1)
            if not byte: raise SystemExit("DevTools closed the connection during the handshake")
            head += byte
        if b" 101 " not in head.split(b"\r\n", 1)[0]: raise SystemExit(f"DevTools refused the WebSocket: {head[:100]!r}")
        self.pending = b""

    def send(self, text):
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(bytes([0x81]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def read(self, n):
        while len(self.pending) < n:
            chunk = self.sock.recv(65536)
            if not chunk: raise SystemExit("DevTools closed the connection")
            self.pending += chunk
        out, self.pending = self.pending[:n], self.pending[n:]
        return out

    def receive(self):
        message = b""
        while True:
            first, second = self.read(2)
            n = second & 0x7F
            if n == 126: n = struct.unpack(">H", self.read(2))[0]
            elif n == 127: n = struct.unpack(">Q", self.read(8))[0]
            mask = self.read(4) if second & 0x80 else None
            payload = self.read(n)
            if mask: payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = first & 0x0F
            if opcode == 8: raise SystemExit("DevTools closed the WebSocket")
            if opcode in (9, 10): continue
            message += payload
            if first & 0x80: return message.decode()


class Page:
    def __init__(self, ws_url):
        self.ws, self.next_id, self.events = WebSocket(ws_url), 0, []

    def call(self, method, **params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == mine:
                if "error" in message: raise SystemExit(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True).get("result", {}).get("value")

    def wait_for(self, expression, what, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value: return value
            time.sleep(0.1)
        raise SystemExit(f"timed out waiting for {what}; the page says: {str(self.evaluate('document.body && document.body.innerText'))[:300]}")


# A new profile each run: an old one's DevToolsActivePort names a port nobody listens on any more.
profile = tempfile.mkdtemp(prefix="chromium-signin-", dir=work)
browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
                            "--remote-debugging-port=0", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    port_file = os.path.join(profile, "DevToolsActivePort")
    for _ in range(600):
        if os.path.exists(port_file) and open(port_file).read().strip(): break
        if browser.poll() is not None: raise SystemExit(f"chromium exited: {browser.returncode}")
        time.sleep(0.1)
    port = open(port_file).read().split()[0]
    targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30))
    page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
    page.call("Network.enable")
    page.call("Page.enable")
    signin = f"{server}/signin?" + urllib.parse.urlencode({"container": container, "callback": callback})
    page.call("Page.navigate", url=signin)
    button = f"document.querySelector('button[name=user][value={json.dumps(user)}]')"
    page.wait_for(f"!!{button}", f"the sign-in page's button for {user}")
    page.evaluate(f"{button}.click()")
    # The form posts to /signin: the browser lands on the callback, or stays on the server with its answer.
    page.wait_for(f"location.href !== {json.dumps(signin)} && document.readyState === 'complete'", "the form's answer")
    location = page.evaluate("location.href")
    posts = [e["params"]["request"] for e in page.events
             if e.get("method") == "Network.requestWillBeSent" and e["params"]["request"]["method"] == "POST"]
    print("origin:", posts[0]["headers"].get("Origin", "absent") if posts else "no POST seen")
    if location.startswith(callback):
        print("landed: callback")
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query).get("ckWebAuthToken", [""])[0]
        query = urllib.parse.urlencode({"ckAPIToken": api_token, "ckWebAuthToken": token})
        try:
            status = urllib.request.urlopen(f"{server}/database/1/{container}/development/private/zones/list?{query}", timeout=30).status
        except urllib.error.HTTPError as error:
            status = error.code
        print("token: zones/list", status)
    else:
        print("landed: elsewhere:", " ".join(str(page.evaluate("document.body.innerText")).split())[:300])
finally:
    browser.kill()
    browser.wait()
