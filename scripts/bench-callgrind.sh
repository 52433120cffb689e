#!/usr/bin/env bash
# Issue 8's work-per-key-press figure, counted in instructions by callgrind: `j` presses through the
# browser core (update, cache window reads, render) over a cache of 1,000 and of 1,000,000 records.
# Valgrind 3.19 crashes inside itself on binaries linked against the shared Swift runtime, but runs the
# static build (scripts/build-static.sh); its debug info is stripped first (valgrind's DWARF reader
# gives up on it), the symbol table stays for --toggle-collect=ckbrowse_bench_keypresses.
# Per press = (instructions with N presses - instructions with 0 presses) / (5 runs x N presses).
# Then the server's instructions per records/changes and records/query page (see below).
# Then the instructions of one fixture suite loop (scripts/bench-fixture.sh's: reset, create a zone,
# write 10, query, delete 1), counted the same way; of a one-record write and a /ready poll; and of one
# operation of a 200-op update batch.
# Usage: scripts/bench-callgrind.sh [PRESSES]   (default 300; about 2 minutes of valgrind at 300, then
# about 5 for the server; SERVER_ONLY=1 skips the key presses; CKBROWSE_STATIC=path counts another static build)
set -euo pipefail
cd "$(dirname "$0")/.."
PRESSES=${1:-300}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
command -v valgrind >/dev/null || $SUDO apt-get install -y -qq valgrind >/dev/null 2>&1 || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq valgrind >/dev/null; }
BIN=${CKBROWSE_STATIC:-.build-static/release/ckbrowse}
[ -n "${CKBROWSE_STATIC:-}" ] || { [ -x "$BIN" ] && [ -z "${REBUILD:-}" ]; } || scripts/build-static.sh
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
cp "$BIN" "$WORK/ckbrowse" && strip --strip-debug "$WORK/ckbrowse"
count() {  # records presses → instructions in ckbrowse_bench_keypresses
    valgrind --tool=callgrind --toggle-collect=ckbrowse_bench_keypresses --callgrind-out-file="$WORK/cg.out" \
        "$WORK/ckbrowse" bench keypress --records "$1" --presses "$2" --cache-directory "$WORK/cache-$1" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
declare -A PER
[ -n "${SERVER_ONLY:-}" ] || for records in 1000 1000000; do
    "$WORK/ckbrowse" bench keypress --records $records --cache-directory "$WORK/cache-$records" --prepare-only >/dev/null
    base=$(count $records 0); total=$(count $records "$PRESSES")
    PER[$records]=$(( (total - base) / (5 * PRESSES) ))
    printf "%9d records: %d instructions per key press (%d presses x 5 runs)\n" $records "${PER[$records]}" "$PRESSES"
done
[ -n "${SERVER_ONLY:-}" ] || python3 -c "import sys; a, b = int(sys.argv[1]), int(sys.argv[2]); print(f'1,000,000 / 1,000: {b / a:.3f}  (budget: at most 2)')" "${PER[1000]}" "${PER[1000000]}"

# (--seed demo on every start: the demo's tokens live in memory only, since issue 28.)
# The server's work per page, counted the same way (the wall-clock figures of bench-nginx.sh move with
# the machine's load; these do not): `serve` under callgrind answering records/changes and records/query
# pages of the demo's Gallery zone, each computed (--answer-cache-mb 0) and, for the ratio, from the
# answer cache. Per page = (instructions after 60 pages - after 10) / 50, the whole process counted.
"$WORK/ckbrowse" serve --data "$WORK/data" --port 0 --seed demo > "$WORK/seed.log" 2>&1 & SEEDER=$!
for _ in $(seq 1 600); do grep -q "listening on" "$WORK/seed.log" && break; sleep 0.2; done
kill $SEEDER; wait $SEEDER 2>/dev/null || true
# `ckbrowse serve --port 0 ARGS…` under callgrind, counting into $WORK/NAME.cg.<pid>, once it listens
# (valgrind may take minutes to start it: three at most): sets SERVE_PID and SERVE_URL, or says why not.
start_counted() {  # name args…
    local name=$1; shift
    rm -f "$WORK/$name".cg.*
    valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.cg.%p" "$WORK/ckbrowse" serve --port 0 "$@" > "$WORK/$name.log" 2>&1 & SERVE_PID=$!
    for _ in $(seq 1 900); do grep -q "listening on" "$WORK/$name.log" && break; sleep 0.2; done
    SERVE_URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/$name.log" | head -1)
    [ -n "$SERVE_URL" ] || { echo "ckbrowse serve did not listen within three minutes under valgrind; its log:" >&2; cat "$WORK/$name.log" >&2; kill $SERVE_PID 2>/dev/null; exit 1; }
}
# Stops the server start_counted started; prints the instructions of its whole process.
stop_counted() {  # name
    kill -INT $SERVE_PID; wait $SERVE_PID 2>/dev/null || true
    cat "$WORK/$1".cg.* | sed -n 's/^summary: *\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s }'
}
serve_count() {  # endpoint cache-mb pages → instructions of the whole serve process
    start_counted serve --data "$WORK/data" --seed demo --answer-cache-mb "$2"
    python3 - "$SERVE_URL" "$1" "$3" <<'PY'
import http.client, sys, urllib.parse
url, endpoint, pages = urllib.parse.urlparse(sys.argv[1]), sys.argv[2], int(sys.argv[3])
body = {"changes": '{"zoneID":{"zoneName":"Gallery"},"resultsLimit":200}',
        "query": '{"zoneID":{"zoneName":"Gallery"},"query":{"recordType":"Artwork","sortBy":[{"systemFieldName":"createdTimestamp"}]},"resultsLimit":200}'}[endpoint]
path = f"/database/1/iCloud.com.example.Gallery/development/private/records/{endpoint}?ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token"
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=900)
for _ in range(pages):
    connection.request("POST", path, body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = response.read()
    # The baseline must do the real work: a page of 200 records, not an error.
    assert response.status == 200 and answer.count(b'"recordName"') >= 200, (response.status, answer[:200])
PY
    stop_counted serve
}
for endpoint in changes query; do
    computed=$(( ($(serve_count $endpoint 0 60) - $(serve_count $endpoint 0 10)) / 50 ))
    cached=$(( ($(serve_count $endpoint 64 60) - $(serve_count $endpoint 64 10)) / 50 ))
    printf "serve records/%s: %d instructions a computed page, %d a cached one (%.2fx)\n" \
        $endpoint $computed $cached "$(python3 -c "print($computed / $cached)")"
done

# The fixture loop: `serve --in-memory` with the suite's schema, as scripts/bench-fixture.sh starts it.
loop_count() {  # loops → instructions of the whole serve process
    start_counted loop --in-memory --api-token bench-fixture-api-token --user alice:bench-fixture-web-token \
        --container iCloud.com.example.Fixture --schema scripts/bench-suite.ckdb
    python3 - "${SERVE_URL##*:}" "$1" <<'PY'
import http.client, json, sys
port, loops = int(sys.argv[1]), int(sys.argv[2])
API, WEB, C = "bench-fixture-api-token", "bench-fixture-web-token", "iCloud.com.example.Fixture"
c = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
def post(path, body):
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse(); data = r.read()
    assert r.status == 200, (path, r.status, data[:200])
    return json.loads(data)
q, base = f"?ckAPIToken={API}&ckWebAuthToken={WEB}", f"/database/1/{C}/development/private"
for i in range(loops):
    post(f"/admin/1/{C}/development/reset?ckAPIToken={API}", {})
    zone = {"zoneName": f"Suite{i % 3}"}
    post(base + "/zones/modify" + q, {"operations": [{"operationType": "create", "zone": {"zoneID": zone}}]})
    ops = [{"operationType": "create", "record": {"recordName": f"item-{n}", "recordType": "Item",
            "fields": {"title": {"value": f"Item {n}"}, "n": {"value": n}}}} for n in range(10)]
    assert len(post(base + "/records/modify" + q, {"zoneID": zone, "operations": ops, "atomic": True})["records"]) == 10
    found = post(base + "/records/query" + q, {"zoneID": zone, "query": {"recordType": "Item", "sortBy": [{"fieldName": "n"}]}, "resultsLimit": 50})
    assert [r["recordName"] for r in found["records"]] == [f"item-{n}" for n in range(10)]
    assert post(base + "/records/modify" + q, {"zoneID": zone, "operations": [{"operationType": "forceDelete", "record": {"recordName": "item-3"}}]})["records"][0]["deleted"]
PY
    stop_counted loop
}
printf "serve fixture loop (reset, create a zone, write 10, query, delete 1): %d instructions a loop\n" \
    $(( ($(loop_count 25) - $(loop_count 5)) / 20 ))
# One request of each kind a suite repeats most, in the same server: a records/modify of one record
# (one field updated) and a `/ready` poll; per request = (instructions after 250 - after 50) / 200.
request_count() {  # update|ready count → instructions of the whole serve process
    start_counted request --in-memory --api-token bench-fixture-api-token --user alice:bench-fixture-web-token \
        --container iCloud.com.example.Fixture --schema scripts/bench-suite.ckdb
    python3 - "${SERVE_URL##*:}" "$1" "$2" <<'PY'
import http.client, json, sys
port, kind, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
API, WEB, C = "bench-fixture-api-token", "bench-fixture-web-token", "iCloud.com.example.Fixture"
c = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
def send(method, path, body=None):
    c.request(method, path, body and json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse(); data = r.read()
    assert r.status == 200, (path, r.status, data[:200])
    return json.loads(data)
q, base = f"?ckAPIToken={API}&ckWebAuthToken={WEB}", f"/database/1/{C}/development/private"
zone = {"zoneName": "Z"}
send("POST", base + "/zones/modify" + q, {"operations": [{"operationType": "create", "zone": {"zoneID": zone}}]})
send("POST", base + "/records/modify" + q, {"zoneID": zone, "operations": [{"operationType": "create", "record": {
    "recordName": "item", "recordType": "Item", "fields": {"title": {"value": "Item"}, "n": {"value": 0}}}}]})
for i in range(count):
    if kind == "ready":
        assert send("GET", "/ready") == {"ready": True}
    else:
        # The baseline must do the real work: the record saved with the new value.
        r = send("POST", base + "/records/modify" + q, {"zoneID": zone, "operations": [{"operationType": "forceUpdate", "record": {
            "recordName": "item", "fields": {"n": {"value": i + 1}}}}]})
        assert r["records"][0]["fields"]["n"]["value"] == i + 1, r
PY
    stop_counted request
}
printf "serve records/modify of one record (one field updated): %d instructions a request\n" \
    $(( ($(request_count update 250) - $(request_count update 50)) / 200 ))
printf "serve /ready: %d instructions a request\n" $(( ($(request_count ready 250) - $(request_count ready 50)) / 200 ))
# One operation of an atomic 200-op records/modify that updates one field of each record (`bench
# serve`'s batch), with the value typed as the Swift client sends it and untyped as CloudKit JS apps
# do: `serve --in-memory`, 200 records of eight fields created, then 2 or 10 such batches;
# per operation = (instructions after 10 - after 2) / (8 x 200).
batch_count() {  # batches typed|untyped → instructions of the whole serve process
    start_counted batch --in-memory --api-token bench-batch-api-token --user alice:bench-batch-web-token --container iCloud.com.example.Batch
    python3 - "${SERVE_URL##*:}" "$1" "$2" <<'PY'
import http.client, json, sys
port, batches, typed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "typed"
c = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
q, base = "?ckAPIToken=bench-batch-api-token&ckWebAuthToken=bench-batch-web-token", "/database/1/iCloud.com.example.Batch/development/private"
def post(path, body):
    c.request("POST", base + path + q, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse(); data = r.read()
    assert r.status == 200, (path, r.status, data[:300])
    return json.loads(data)
zone = {"zoneName": "Bench"}
post("/zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": zone}}]})
ops = [{"operationType": "create", "record": {"recordName": f"R{i:07d}", "recordType": "Artwork", "fields": {
    "title": {"value": f"Artwork number {i}"}, "artist": {"value": "Someone Famous"}, "year": {"value": 1900 + i},
    "price": {"value": 12.5 * i}, "views": {"value": 0}, "tags": {"value": ["a", "b", "c"]},
    "location": {"value": {"latitude": 48.8, "longitude": 2.3}}, "description": {"value": "x" * 200}}}} for i in range(200)]
records = post("/records/modify", {"zoneID": zone, "operations": ops, "atomic": True})["records"]
for k in range(batches):
    value = {"value": k + 1, "type": "INT64"} if typed else {"value": k + 1}
    ops = [{"operationType": "update", "record": {"recordName": r["recordName"], "recordChangeTag": r["recordChangeTag"], "fields": {"views": value}}} for r in records]
    records = post("/records/modify", {"zoneID": zone, "operations": ops, "atomic": True})["records"]
    # The baseline must do the real work: 200 records saved, each with the new value.
    assert len(records) == 200 and all(r["fields"]["views"]["value"] == k + 1 for r in records), records[:1]
PY
    stop_counted batch
}
for kind in typed untyped; do
    printf "serve records/modify, 200 updates of one field (%s values): %d instructions an operation\n" $kind \
        $(( ($(batch_count 10 $kind) - $(batch_count 2 $kind)) / 1600 ))
done
