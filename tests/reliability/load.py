#!/usr/bin/env python3
"""Load on `ckbrowse serve`: concurrent clients doing lookups, queries, change-feed reads and
conditional read-modify-write increments on a few shared records, for a bounded time. Every stale
write must get CONFLICT (and is retried); at the end each counter equals the number of acknowledged
increments (0 lost updates), with 0 5xx answers. Prints throughput and latency percentiles."""
import random, sys, threading, time
from common import Client, Server, percentile

CLIENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 20
COUNTERS = 10

server = Server()
server.start()
setup = Client(server.port)
setup.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "L"}}}]})
setup.call("private", "records/modify", {"zoneID": {"zoneName": "L"}, "operations": [
    {"operationType": "create", "record": {"recordName": f"c{k}", "recordType": "Counter", "fields": {"n": {"value": 0, "type": "INT64"}}}} for k in range(COUNTERS)]})

lock = threading.Lock()
latencies = []
increments = [0] * COUNTERS
stats = {"requests": 0, "conflicts": 0, "5xx": 0, "other_errors": 0, "transport": 0}
deadline = time.time() + SECONDS


def timed(client, *args, **kwargs):
    start = time.perf_counter()
    status, answer = client.call(*args, **kwargs)
    elapsed = time.perf_counter() - start
    with lock:
        latencies.append(elapsed)
        stats["requests"] += 1
        if status >= 500:
            stats["5xx"] += 1
    return status, answer


def worker(seed):
    rng = random.Random(seed)
    client = Client(server.port, timeout=30)
    while time.time() < deadline:
        roll = rng.random()
        try:
            if roll < 0.4:
                k = rng.randrange(COUNTERS)
                while time.time() < deadline:
                    status, answer = timed(client, "private", "records/lookup", {"zoneID": {"zoneName": "L"}, "records": [{"recordName": f"c{k}"}]})
                    record = answer["records"][0]
                    n = record["fields"]["n"]["value"]
                    status, answer = timed(client, "private", "records/modify", {"zoneID": {"zoneName": "L"}, "operations": [
                        {"operationType": "update", "record": {"recordName": f"c{k}", "recordChangeTag": record["recordChangeTag"],
                                                               "fields": {"n": {"value": n + 1, "type": "INT64"}}}}]})
                    if status == 200 and "recordChangeTag" in answer["records"][0]:
                        with lock:
                            increments[k] += 1
                        break
                    code = answer["records"][0].get("serverErrorCode") if answer and answer.get("records") else None
                    with lock:
                        if code == "CONFLICT":
                            stats["conflicts"] += 1
                        else:
                            stats["other_errors"] += 1
                            break
            elif roll < 0.6:
                timed(client, "private", "records/lookup", {"zoneID": {"zoneName": "L"}, "records": [{"recordName": f"c{rng.randrange(COUNTERS)}"}]})
            elif roll < 0.8:
                timed(client, "private", "records/query", {"zoneID": {"zoneName": "L"}, "query": {"recordType": "Counter",
                      "filterBy": [{"fieldName": "n", "comparator": "GREATER_THAN_OR_EQUALS", "fieldValue": {"value": 0, "type": "INT64"}}]}})
            else:
                timed(client, "private", "records/changes", {"zoneID": {"zoneName": "L"}, "resultsLimit": 50})
        except Exception:
            with lock:
                stats["transport"] += 1


threads = [threading.Thread(target=worker, args=(i,)) for i in range(CLIENTS)]
started = time.time()
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.time() - started
status, answer = setup.call("private", "records/lookup", {"zoneID": {"zoneName": "L"}, "records": [{"recordName": f"c{k}"} for k in range(COUNTERS)]})
final = [r["fields"]["n"]["value"] for r in answer["records"]]
lost = sum(max(0, increments[k] - final[k]) for k in range(COUNTERS))
phantom = sum(max(0, final[k] - increments[k]) for k in range(COUNTERS))
server.stop()
ms = [x * 1000 for x in latencies]
print(f"load: {CLIENTS} clients for {elapsed:.1f} s: {stats['requests']} requests ({stats['requests'] / elapsed:.0f}/s)")
print(f"load: {sum(increments)} acknowledged increments, {stats['conflicts']} stale writes answered CONFLICT (retried)")
print(f"load: lost updates {lost}, phantom updates {phantom}, 5xx {stats['5xx']}, other errors {stats['other_errors']}, transport failures {stats['transport']}")
print(f"load: latency p50 {percentile(ms, 50):.1f} ms, p90 {percentile(ms, 90):.1f} ms, p99 {percentile(ms, 99):.1f} ms, max {max(ms):.1f} ms")
ok = lost == 0 and phantom == 0 and stats["5xx"] == 0 and stats["other_errors"] == 0 and stats["transport"] == 0 and stats["conflicts"] > 0
print("load: PASS" if ok else "load: FAIL")
sys.exit(0 if ok else 1)
