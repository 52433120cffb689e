#!/usr/bin/env python3
"""Crash safety of `ckbrowse serve`: atomic records/modify batches while the server is killed with
SIGKILL at random moments and restarted. Afterwards every batch is applied fully or not at all,
every acknowledged batch is present, and the change feed from a token taken before the run returns
each change exactly once. Prints the figures; exits 1 on any violation."""
import random, sys, threading, time
from common import Client, Server

BATCHES = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
SIZE = 5
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)

server = Server()
server.start()
client = Client(server.port, timeout=10)
status, _ = client.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Crash"}}}]})
assert status == 200, status
# The token before the run: page the (empty) feed to its end.
status, page = client.call("private", "records/changes", {"zoneID": {"zoneName": "Crash"}})
assert status == 200, (status, page)
start_token = page["syncToken"]

kills = 0
acknowledged = set()
failed_requests = 0
timer = None
lock = threading.Lock()


def schedule_kill():
    global timer
    timer = threading.Timer(rng.uniform(0.05, 0.6), server.kill)
    timer.start()


started = time.time()
schedule_kill()
for i in range(BATCHES):
    if server.proc.poll() is not None:
        kills += 1
        server.start()
        schedule_kill()
    ops = [{"operationType": "create", "record": {"recordName": f"b{i}-r{j}", "recordType": "Item",
            "fields": {"batch": {"value": i, "type": "INT64"}, "j": {"value": j, "type": "INT64"}}}} for j in range(SIZE)]
    try:
        status, answer = client.call("private", "records/modify", {"zoneID": {"zoneName": "Crash"}, "atomic": True, "operations": ops})
        records = (answer or {}).get("records", [])
        if status == 200 and len(records) == SIZE and all("recordChangeTag" in r for r in records):
            acknowledged.add(i)
        else:
            failed_requests += 1
    except Exception:
        failed_requests += 1  # the answer was lost: the batch may or may not be applied (never resent)
        timer.join()  # the kill is under way: let it finish, then restart at the next batch
timer.cancel()
if server.proc.poll() is not None:
    kills += 1
    server.start()
elapsed = time.time() - started

# Every batch: all or nothing; every acknowledged one present.
present = {}
names = [f"b{i}-r{j}" for i in range(BATCHES) for j in range(SIZE)]
for k in range(0, len(names), 200):
    chunk = names[k:k + 200]
    status, answer = client.call("private", "records/lookup", {"zoneID": {"zoneName": "Crash"}, "records": [{"recordName": n} for n in chunk]})
    assert status == 200, status
    for r in answer["records"]:
        if "recordChangeTag" in r:
            batch = int(r["recordName"].split("-")[0][1:])
            present[batch] = present.get(batch, 0) + 1
partial = sorted(b for b, n in present.items() if n != SIZE)
lost = sorted(b for b in acknowledged if present.get(b, 0) != SIZE)
applied = sum(1 for n in present.values() if n == SIZE)

# The change feed from the token taken before the run: each change exactly once.
seen = {}
token = start_token
while True:
    status, page = client.call("private", "records/changes", {"zoneID": {"zoneName": "Crash"}, "syncToken": token, "resultsLimit": 200})
    assert status == 200, (status, page)
    for r in page["records"]:
        seen[r["recordName"]] = seen.get(r["recordName"], 0) + 1
    token = page["syncToken"]
    if not page.get("moreComing"):
        break
duplicates = sum(1 for n in seen.values() if n > 1)
expected = {f"b{b}-r{j}" for b, n in present.items() for j in range(SIZE)}
missing = len(expected - set(seen))
extra = len(set(seen) - expected)
server.stop()

print(f"crash: {BATCHES} atomic batches of {SIZE} in {elapsed:.1f} s, {kills} SIGKILLs + restarts")
print(f"crash: acknowledged {len(acknowledged)}, applied {applied}, unanswered or refused {failed_requests}")
print(f"crash: partial batches {len(partial)}, acknowledged but missing {len(lost)}")
print(f"crash: change feed from the pre-run token: {len(seen)} records, duplicates {duplicates}, missing {missing}, unexpected {extra}")
ok = not partial and not lost and duplicates == 0 and missing == 0 and extra == 0 and kills > 0
print("crash: PASS" if ok else "crash: FAIL")
sys.exit(0 if ok else 1)
