"""The security tests' server fixture: a container with a schema (a `Secret` type only Moderators
READ, a world-readable `Note`), users alice and bob (bob a Moderator), and `Serve`, a `ckbrowse serve`
with its own port and log whose requests return (status, body, headers)."""
import http.client, json, os, subprocess, tempfile, time, urllib.parse

from common import binary, free_port, wait_listening

C = "iCloud.com.example.Security"
API = "security-api-token"
ALICE, BOB = "alice-security-token", "bob-security-token"
SCHEMA = """DEFINE SCHEMA
    CREATE ROLE Moderator;
    RECORD TYPE Secret (
        "___createTime" TIMESTAMP,
        "___createdBy"  REFERENCE,
        "___etag"       STRING,
        "___modTime"    TIMESTAMP,
        "___modifiedBy" REFERENCE,
        "___recordID"   REFERENCE QUERYABLE,
        file            ASSET,
        note            STRING,
        GRANT WRITE TO "_creator",
        GRANT CREATE TO "_icloud",
        GRANT READ TO Moderator
    );
    RECORD TYPE Note (
        "___createTime" TIMESTAMP,
        "___createdBy"  REFERENCE,
        "___etag"       STRING,
        "___modTime"    TIMESTAMP,
        "___modifiedBy" REFERENCE,
        "___recordID"   REFERENCE QUERYABLE,
        file            ASSET,
        text            STRING,
        GRANT WRITE TO "_creator",
        GRANT CREATE TO "_icloud",
        GRANT READ TO "_world"
    );
"""

work = tempfile.mkdtemp(prefix="cksec-")
schema_file = os.path.join(work, "schema.ckdb")
open(schema_file, "w").write(SCHEMA)


class Serve:
    def __init__(self, data, args, env=None):
        self.port = free_port()
        self.data = data
        cmd = [binary(), "serve", "--port", str(self.port)] + (["--data", data] if data else []) + args
        self.log = open(os.path.join(work, f"serve-{self.port}.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, env=env)
        if wait_listening(self.proc, 60)[0]:
            return
        raise RuntimeError("serve did not start: " + open(self.log.name, "rb").read().decode(errors="replace")[-500:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def request(self, method, target, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        data = body if body is None or isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
        conn.request(method, target, body=data, headers=headers or {})
        r = conn.getresponse()
        out = (r.status, r.read(), {k.lower(): v for k, v in r.getheaders()})
        conn.close()
        return out

    def call(self, db, op, body=None, token=ALICE, method="POST", headers=None, api=API, env="development"):
        q = {"ckAPIToken": api}
        if token:
            q["ckWebAuthToken"] = token
        status, data, h = self.request(method, f"/database/1/{C}/{env}/{db}/{op}?" + urllib.parse.urlencode(q), body, headers)
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = None
        return status, parsed, h


def standard(data, extra=()):
    return Serve(data, ["--api-token", f"{API}@{C}", "--user", f"alice:{ALICE}", "--user", f"bob:{BOB}", "--container", C,
                        "--schema", schema_file, "--role", "bob:Moderator"] + list(extra))


def upload(s, token, record_type, name, data=b"secret bytes"):
    status, answer, _ = s.call("public", "assets/upload", {"zoneID": {"zoneName": "_defaultZone"},
                               "tokens": [{"recordName": name, "recordType": record_type, "fieldName": "file"}]}, token=token)
    url = answer["tokens"][0]["url"]
    path = urllib.parse.urlsplit(url).path
    status, body, _ = s.request("POST", path, data)
    return path, status, json.loads(body) if body else None


