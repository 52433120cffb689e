#!/usr/bin/env bash
# Issue 33's fixture figures: `ckbrowse serve` as a test suite's server, against moto's DynamoDB server
# (the emulator Python test suites use), driven by the same client (Python's http.client, one kept-alive
# connection) with the same records. Printed: the time from spawn until the server answers; and the
# suite loop a test suite runs between tests, in loops a second: reset the fixture, create a zone (a
# table), write 10 records (items) in one request, query them, delete 1. Each answer is checked (the 10
# written, the query answering all 10 of them, the delete answered) before any figure is trusted.
# With the loop rate, where a loop's time went: the server's CPU and the client's own, and what the
# client's own share allows at most (the ratio a server taking no time would reach). Then, after each
# loop run on the same server, single writes, point reads and bulk writes (below).
# Usage: scripts/bench-fixture.sh [SECONDS per loop run] [RUNS]   (defaults 5 and 3; medians printed)
# CKBROWSE_BIN=path picks the binary, as in the other scripts (CKBROWSE= too; default: the release build, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-5}
RUNS=${2:-3}
BIN=${CKBROWSE_BIN:-${CKBROWSE:-}}
if [ -z "$BIN" ]; then
    BIN="$(swift build -c release --show-bin-path)/ckbrowse"
    [ -x "$BIN" ] || swift build -c release --product ckbrowse >/dev/null
fi
command -v moto_server >/dev/null || pip install -q "moto[server]" >/dev/null
exec python3 - "$BIN" "$SECONDS_PER_RUN" "$RUNS" <<'PY'
import http.client, json, os, signal, socket, statistics, subprocess, sys, tempfile, time

binary, seconds, runs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
API, WEB = "bench-fixture-api-token", "bench-fixture-web-token"
CONTAINER = "iCloud.com.example.Fixture"

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

def wait_ready(port, path, started, proc):
    while True:
        if proc.poll() is not None: raise SystemExit(f"server exited: {proc.returncode}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", path); r = c.getresponse(); r.read(); c.close()
            if r.status < 500: return time.perf_counter() - started
        except OSError:
            pass
        time.sleep(0.002)

# The suite's schema, loaded at start as a suite would (`--schema`): a reset returns to it.
SCHEMA = os.path.abspath("scripts/bench-suite.ckdb")

def spawn_ckbrowse():
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([binary, "serve", "--in-memory", "--port", str(port), "--api-token", API, "--user", f"alice:{WEB}",
                             "--container", CONTAINER, "--schema", SCHEMA],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, port, wait_ready(port, "/ready", started, proc)

def spawn_moto():
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(["moto_server", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, port, wait_ready(port, "/moto-api/", started, proc)

class Client:
    def __init__(self, port): self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    def post(self, path, body, headers=None):
        self.c.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
        r = self.c.getresponse(); data = r.read()
        if r.status != 200: raise SystemExit(f"{path}: {r.status} {data[:300]!r}")
        return json.loads(data) if data else {}

def ck_loop(client, i):
    q = f"?ckAPIToken={API}&ckWebAuthToken={WEB}"
    base = f"/database/1/{CONTAINER}/development/private"
    client.post(f"/admin/1/{CONTAINER}/development/reset?ckAPIToken={API}", {})
    zone = {"zoneName": f"Suite{i % 3}"}
    client.post(base + "/zones/modify" + q, {"operations": [{"operationType": "create", "zone": {"zoneID": zone}}]})
    ops = [{"operationType": "create", "record": {"recordName": f"item-{n}", "recordType": "Item",
            "fields": {"title": {"value": f"Item {n}"}, "n": {"value": n}}}} for n in range(10)]
    written = client.post(base + "/records/modify" + q, {"zoneID": zone, "operations": ops, "atomic": True})
    assert len(written["records"]) == 10 and all("serverErrorCode" not in r for r in written["records"]), written
    found = client.post(base + "/records/query" + q, {"zoneID": zone, "query": {"recordType": "Item", "sortBy": [{"fieldName": "n"}]},
                         "resultsLimit": 50})
    assert [r["recordName"] for r in found["records"]] == [f"item-{n}" for n in range(10)], found
    deleted = client.post(base + "/records/modify" + q, {"zoneID": zone, "operations": [
        {"operationType": "forceDelete", "record": {"recordName": "item-3"}}]})
    assert deleted["records"][0].get("deleted") is True, deleted

def moto_loop(client, i):
    def ddb(action, body):
        return client.post("/", body, {"X-Amz-Target": f"DynamoDB_20120810.{action}", "Content-Type": "application/x-amz-json-1.0",
                                       "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"})
    client.post("/moto-api/reset", {})
    table = f"Suite{i % 3}"
    ddb("CreateTable", {"TableName": table, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]})
    items = [{"PutRequest": {"Item": {"pk": {"S": "Item"}, "sk": {"S": f"item-{n}"}, "title": {"S": f"Item {n}"}, "n": {"N": str(n)}}}} for n in range(10)]
    written = ddb("BatchWriteItem", {"RequestItems": {table: items}})
    assert not written.get("UnprocessedItems"), written
    found = ddb("Query", {"TableName": table, "KeyConditionExpression": "pk = :t", "ExpressionAttributeValues": {":t": {"S": "Item"}}})
    assert sorted(i["sk"]["S"] for i in found["Items"]) == sorted(f"item-{n}" for n in range(10)), found
    ddb("DeleteItem", {"TableName": table, "Key": {"pk": {"S": "Item"}, "sk": {"S": "item-3"}}})

# The other figures the issue compared: single writes (one record a request), point reads (one
# record a request), bulk writes (records a second, each API's largest batch: 200 operations a
# records/modify, 25 items a BatchWriteItem). Each side writes into the zone (table) its loop made.
def ck_ops(client):
    q = f"?ckAPIToken={API}&ckWebAuthToken={WEB}"
    base = f"/database/1/{CONTAINER}/development/private"
    zone = {"zoneName": "Ops"}
    client.post(base + "/zones/modify" + q, {"operations": [{"operationType": "create", "zone": {"zoneID": zone}}]})
    counter = iter(range(10**9))
    def single():
        n = next(counter)
        r = client.post(base + "/records/modify" + q, {"zoneID": zone, "operations": [{"operationType": "create", "record": {
            "recordName": f"s-{n}", "recordType": "Item", "fields": {"title": {"value": f"Item {n}"}, "n": {"value": n}}}}]})
        assert r["records"][0]["recordName"] == f"s-{n}", r
        return 1
    def read():
        r = client.post(base + "/records/lookup" + q, {"zoneID": zone, "records": [{"recordName": "s-0"}]})
        assert r["records"][0]["fields"]["n"]["value"] == 0, r
        return 1
    def bulk():
        start = next(counter) * 1000
        ops = [{"operationType": "create", "record": {"recordName": f"b-{start + n}", "recordType": "Item",
                "fields": {"title": {"value": f"Item {n}"}, "n": {"value": n}}}} for n in range(200)]
        r = client.post(base + "/records/modify" + q, {"zoneID": zone, "operations": ops})
        assert len(r["records"]) == 200 and all("serverErrorCode" not in x for x in r["records"]), r
        return 200
    return single, read, bulk

def moto_ops(client):
    def ddb(action, body):
        return client.post("/", body, {"X-Amz-Target": f"DynamoDB_20120810.{action}", "Content-Type": "application/x-amz-json-1.0",
                                       "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"})
    ddb("CreateTable", {"TableName": "Ops", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]})
    counter = iter(range(10**9))
    def single():
        n = next(counter)
        ddb("PutItem", {"TableName": "Ops", "Item": {"pk": {"S": "Item"}, "sk": {"S": f"s-{n}"}, "title": {"S": f"Item {n}"}, "n": {"N": str(n)}}})
        return 1
    def read():
        r = ddb("GetItem", {"TableName": "Ops", "Key": {"pk": {"S": "Item"}, "sk": {"S": "s-0"}}})
        assert r["Item"]["n"]["N"] == "0", r
        return 1
    def bulk():
        start = next(counter) * 1000
        items = [{"PutRequest": {"Item": {"pk": {"S": "Item"}, "sk": {"S": f"b-{start + n}"}, "title": {"S": f"Item {n}"}, "n": {"N": str(n)}}}} for n in range(25)]
        r = ddb("BatchWriteItem", {"RequestItems": {"Ops": items}})
        assert not r.get("UnprocessedItems"), r
        return 25
    return single, read, bulk

def per_second(action, duration):
    action()
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < duration:
        done += action()
    return done / (time.perf_counter() - started)

def cpu_seconds(pid):
    # utime + stime of the whole process (every thread), from /proc: Linux only, as this script is.
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def loops_per_second(proc, port, loop):
    client = Client(port)
    for i in range(5): loop(client, i)  # warm up (and check the answers once more)
    done, started = 0, time.perf_counter()
    server_before, client_before = cpu_seconds(proc.pid), time.process_time()
    while time.perf_counter() - started < seconds:
        loop(client, done); done += 1
    elapsed = time.perf_counter() - started
    # Where a loop's time goes: the server's CPU and this client's own (encoding, HTTP, parsing the
    # answers); one waits for the other. The client's share bounds the ratio: a server that took no
    # time at all would still wait for it.
    split = {"wall": elapsed / done, "server": (cpu_seconds(proc.pid) - server_before) / done,
             "client": (time.process_time() - client_before) / done}
    return done / elapsed, split

results = {name: {"ready": [], "loops": [], "split": [], "single": [], "read": [], "bulk": []} for name in ("ckbrowse", "moto")}
for run in range(runs):
    for name, spawn, loop, ops in (("ckbrowse", spawn_ckbrowse, ck_loop, ck_ops), ("moto", spawn_moto, moto_loop, moto_ops)):
        proc, port, ready = spawn()
        try:
            results[name]["ready"].append(ready)
            rate, split = loops_per_second(proc, port, loop)
            results[name]["loops"].append(rate)
            results[name]["split"].append(split)
            single, read, bulk = ops(Client(port))
            for key, action in (("single", single), ("read", read), ("bulk", bulk)):
                results[name][key].append(per_second(action, seconds / 2))
        finally:
            proc.send_signal(signal.SIGINT)
            try: proc.wait(10)
            except subprocess.TimeoutExpired: proc.kill(); proc.wait()
    print(f"run {run + 1}: ckbrowse {results['ckbrowse']['loops'][-1]:.0f} loops/s, moto {results['moto']['loops'][-1]:.0f} loops/s "
          f"(ready after {results['ckbrowse']['ready'][-1] * 1000:.0f} / {results['moto']['ready'][-1] * 1000:.0f} ms)", flush=True)
def median(name, key): return statistics.median(results[name][key])
for key, label in (("single", "single writes (one record a request)"), ("read", "point reads (one record a request)"),
                   ("bulk", "bulk writes (records/s: 200 a records/modify, 25 a BatchWriteItem)")):
    print(f"{label}: ckbrowse {median('ckbrowse', key):.0f}/s, moto {median('moto', key):.0f}/s: {median('ckbrowse', key) / median('moto', key):.1f}x")
ck, moto = statistics.median(results["ckbrowse"]["loops"]), statistics.median(results["moto"]["loops"])
print(f"ready after spawn (median): ckbrowse {statistics.median(results['ckbrowse']['ready']) * 1000:.0f} ms, moto {statistics.median(results['moto']['ready']) * 1000:.0f} ms")
print(f"suite loop (reset, create a zone, write 10, query, delete 1), median of {runs}: ckbrowse {ck:.0f}/s, moto {moto:.0f}/s: {ck / moto:.1f}x  (budget: at least 10x)")
def part(name, key): return statistics.median(s[key] for s in results[name]["split"]) * 1000
for name in ("ckbrowse", "moto"):
    print(f"  a {name} loop: {part(name, 'wall'):.2f} ms; the server's CPU {part(name, 'server'):.2f} ms, the client's own "
          f"{part(name, 'client'):.2f} ms (medians; /proc's ticks and process_time, so the two may add up to a little more than the loop)")
print(f"  with this client, a server that took no time at all would make {part('moto', 'wall') / part('ckbrowse', 'client'):.1f}x moto's loop "
      f"(moto's loop over the client's own CPU in ckbrowse's)")
PY
