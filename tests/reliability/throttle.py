#!/usr/bin/env python3
"""Throttling: a proxy in front of `ckbrowse serve` refuses the first attempt of every request with
THROTTLED (429) or TRY_AGAIN_LATER (503) and `retryAfter`, without forwarding it. `ckbrowse apply`
sends atomic batches through it: each must succeed after waiting at least `retryAfter`, and every
record must exist exactly once (nothing applied twice, nothing lost)."""
import hashlib, http.client, http.server, json, os, subprocess, sys, tempfile, threading, time
from common import API_TOKEN, CONTAINER, USERS, Client, Server, binary, free_port

BATCHES = int(sys.argv[1]) if len(sys.argv) > 1 else 10
RETRY_AFTER = 1
server = Server()
server.start()
Client(server.port).call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "T"}}}]})

lock = threading.Lock()
refused = {}      # request key -> time refused
waits = []
forwarded_modifies = 0
refusals = 0


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        global forwarded_modifies, refusals
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        key = hashlib.sha256(self.path.split("?")[0].encode() + body).hexdigest()
        with lock:
            first = key not in refused
            if first:
                refused[key] = time.time()
                refusals += 1
                throttled = refusals % 2 == 1
            else:
                waits.append(time.time() - refused[key])
                if "records/modify" in self.path:
                    forwarded_modifies += 1
        if first:
            code, status = ("THROTTLED", 429) if throttled else ("TRY_AGAIN_LATER", 503)
            data = json.dumps({"uuid": "p", "serverErrorCode": code, "reason": "slow down", "retryAfter": RETRY_AFTER}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        upstream = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        upstream.request("POST", self.path, body=body, headers={"Content-Type": "application/json"})
        response = upstream.getresponse()
        data = response.read()
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


proxy = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Proxy)
threading.Thread(target=proxy.serve_forever, daemon=True).start()
env = dict(os.environ, CLOUDKIT_SERVER=f"http://127.0.0.1:{proxy.server_address[1]}", CLOUDKIT_CONTAINER=CONTAINER,
           CLOUDKIT_DATABASE="private", CLOUDKIT_API_TOKEN=API_TOKEN, CLOUDKIT_WEB_AUTH_TOKEN=USERS["alice"])
work = tempfile.mkdtemp(prefix="ckthrottle-")
failures = []
started = time.time()
for b in range(BATCHES):
    batch = {"zoneID": {"zoneName": "T"}, "operations": [
        {"operationType": "create", "record": {"recordName": f"t{b}-{j}", "recordType": "Item", "fields": {"j": {"value": j, "type": "INT64"}}}} for j in range(3)]}
    file = os.path.join(work, f"b{b}.json")
    with open(file, "w") as f:
        json.dump(batch, f)
    result = subprocess.run([binary(), "apply", file], env=env, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        failures.append(f"batch {b}: exit {result.returncode}: {result.stderr.strip()[:200]}")
elapsed = time.time() - started
proxy.shutdown()
status, answer = Client(server.port).call("private", "records/lookup", {"zoneID": {"zoneName": "T"}, "records": [
    {"recordName": f"t{b}-{j}"} for b in range(BATCHES) for j in range(3)]})
present = sum(1 for r in answer["records"] if "recordChangeTag" in r)
server.stop()
short = [w for w in waits if w < RETRY_AFTER - 0.05]
print(f"throttle: {BATCHES} atomic batches through a proxy that refused {refusals} first attempts (THROTTLED/TRY_AGAIN_LATER, retryAfter {RETRY_AFTER} s) in {elapsed:.1f} s")
print(f"throttle: retries waited {min(waits) if waits else 0:.2f}–{max(waits) if waits else 0:.2f} s; retries sooner than retryAfter: {len(short)}")
print(f"throttle: records/modify forwarded {forwarded_modifies} times for {BATCHES} batches; records present {present} of {BATCHES * 3}; failed applies {len(failures)}")
for f in failures[:5]:
    print("  " + f)
ok = not failures and not short and forwarded_modifies == BATCHES and present == BATCHES * 3
print("throttle: PASS" if ok else "throttle: FAIL")
sys.exit(0 if ok else 1)
