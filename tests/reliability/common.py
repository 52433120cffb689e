"""Shared helpers for the reliability tests: start `ckbrowse serve`, send CloudKit requests."""
import json, os, socket, subprocess, sys, tempfile, time, http.client, urllib.parse

CONTAINER = "iCloud.com.example.Reliability"
API_TOKEN = "reliability-api-token"
USERS = {"alice": "alice-web-token", "bob": "bob-web-token"}


def binary():
    path = os.environ.get("CKBROWSE_BIN")
    if path:
        return path
    out = subprocess.run(["swift", "build", "--show-bin-path"], capture_output=True, text=True, check=True)
    return os.path.join(out.stdout.strip(), "ckbrowse")


def wait_listening(proc, timeout):
    """Reads a starting `ckbrowse serve`'s stdout until it says it is listening. Returns (True, line) then,
    or (False, last line read) when it exited or `timeout` seconds went by first."""
    deadline = time.time() + timeout
    line = b""
    while time.time() < deadline:
        line = proc.stdout.readline()
        if b"listening on" in line:
            return True, line
        if proc.poll() is not None:
            break
    return False, line


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """`ckbrowse serve` on a fixed loopback port and data directory, restartable."""

    def __init__(self, data=None, port=None, extra=()):
        self.data = data or tempfile.mkdtemp(prefix="ckrel-")
        self.port = port or free_port()
        self.extra = list(extra)
        self.proc = None
        self.log = open(os.path.join(self.data, "serve.log"), "ab")

    def start(self, timeout=30):
        args = [binary(), "serve", "--data", self.data, "--port", str(self.port), "--api-token", API_TOKEN]
        for name, token in USERS.items():
            args += ["--user", f"{name}:{token}"]
        self.proc = subprocess.Popen(args + self.extra, stdout=subprocess.PIPE, stderr=self.log)
        listening, line = wait_listening(self.proc, timeout)
        if not listening:
            raise RuntimeError(f"serve did not start: {line!r}")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def path(db, operation, env="development", container=CONTAINER):
    return f"/database/1/{container}/{env}/{db}/{operation}"


def query(user="alice", api=API_TOKEN):
    items = {"ckAPIToken": api}
    if user:
        items["ckWebAuthToken"] = USERS.get(user, user)
    return urllib.parse.urlencode(items)


class Client:
    """One keep-alive HTTP connection."""

    def __init__(self, port, timeout=30):
        self.port = port
        self.timeout = timeout
        self.conn = None

    def request(self, method, url, body=None, headers=None):
        """Returns (status, body bytes, headers); raises on connection problems."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        data = body if isinstance(body, (bytes, bytearray)) or body is None else json.dumps(body).encode()
        try:
            self.conn.request(method, url, body=data, headers=headers or {})
            response = self.conn.getresponse()
            return response.status, response.read(), dict(response.getheaders())
        except Exception:
            self.conn.close()
            self.conn = None
            raise

    def call(self, db, operation, body=None, user="alice", method="POST"):
        status, data, _ = self.request(method, path(db, operation) + "?" + query(user), body)
        return status, (json.loads(data) if data else None)


def percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1)))))
    return ordered[k]
