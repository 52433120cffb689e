#!/usr/bin/env bash
# End-to-end: the scriptable commands against `ckbrowse serve` on loopback (JSON lines, tables, exit
# statuses, resuming a change feed). Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
[ -x "$BIN" ] || swift build --product ckbrowse >/dev/null
WORK=$(mktemp -d); passed=0; failed=0
trap '[ -n "${PID:-}" ] && kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; }
"$BIN" serve --data "$WORK/data" --port 0 --seed demo > "$WORK/serve.log" 2>&1 & PID=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/serve.log" && break; sleep 0.1; done
export CLOUDKIT_SERVER=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/serve.log" | head -1)
export CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private
export CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token
jsonl() { python3 -c 'import json, sys; rows = [json.loads(l) for l in sys.stdin if l.strip()]; print(eval(sys.argv[1]))' "$1"; }

out=$("$BIN" zones); [ "$(echo "$out" | jsonl 'len(rows)')" = 3 ] && [ "$(echo "$out" | jsonl 'rows[2]["zoneID"]["zoneName"]')" = Gallery ] \
    && ok "zones: one JSON object per line" || bad "zones: $out"
out=$("$BIN" zones --output table); echo "$out" | head -1 | grep -q "^ZONE  *OWNER  *TYPE  *ATOMIC" && echo "$out" | grep -q "^Gallery  " \
    && ok "zones --output table: aligned columns" || bad "table: $out"
"$BIN" changes Gallery --all > "$WORK/all.jsonl"; code=$?
n=$(jsonl 'sum(1 for r in rows if "recordName" in r)' < "$WORK/all.jsonl")
[ $code = 0 ] && [ "$n" -ge 2000 ] && [ "$(jsonl 'rows[-1]["moreComing"]' < "$WORK/all.jsonl")" = False ] \
    && ok "changes --all: $n records and a last line with the sync token" || bad "changes --all: exit $code, $n records"
token=$(jsonl 'rows[-1]["syncToken"]' < "$WORK/all.jsonl")
curl -s -X POST "$CLOUDKIT_SERVER/database/1/iCloud.com.example.Gallery/development/private/records/modify?ckAPIToken=$CLOUDKIT_API_TOKEN&ckWebAuthToken=$CLOUDKIT_WEB_AUTH_TOKEN" \
    -d '{"zoneID":{"zoneName":"Gallery"},"operations":[{"operationType":"forceUpdate","record":{"recordName":"artwork-0005","fields":{"title":{"value":"Later","type":"STRING"}}}}]}' > /dev/null
out=$("$BIN" changes Gallery --since "$token")
[ "$(echo "$out" | jsonl '[r["recordName"] for r in rows if "recordName" in r]')" = "['artwork-0005']" ] && ok "changes --since resumes: only the later change" || bad "--since: $out"
[ "$("$BIN" changes Gallery --limit 5 | jsonl 'len(rows)')" = 6 ] && ok "changes without --all: one page (+ the token line)" || bad "one page"
out=$("$BIN" query Artwork --zone Gallery --filter 'year LESS_THAN 1900' --sort year:desc --all)
echo "$out" | jsonl 'all(r["fields"]["year"]["value"] < 1900 for r in rows) and len(rows) > 0 and [r["fields"]["year"]["value"] for r in rows] == sorted([r["fields"]["year"]["value"] for r in rows], reverse=True)' | grep -q True \
    && ok "query with --filter and --sort:desc ($(echo "$out" | jsonl 'len(rows)') records)" || bad "query: $(echo "$out" | head -c 300)"
# One page is said to be one: a last line with the continuation marker, which --continue reads on from.
out=$("$BIN" query Artwork --zone Gallery --filter 'year LESS_THAN 1900' --sort year:desc --limit 3)
marker=$(echo "$out" | tail -1 | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["continuationMarker"] if d.get("moreComing") else "")')
[ "$(echo "$out" | grep -c '"recordName"')" = 3 ] && [ -n "$marker" ] && ok "query without --all: 3 records, then a line with the continuation marker" || bad "query page: $(echo "$out" | tail -2)"
next=$("$BIN" query Artwork --zone Gallery --filter 'year LESS_THAN 1900' --sort year:desc --limit 3 --continue "$marker" | grep '"recordName"' | head -1)
all4=$("$BIN" query Artwork --zone Gallery --filter 'year LESS_THAN 1900' --sort year:desc --limit 4 | grep '"recordName"' | tail -1)
[ -n "$next" ] && [ "$(echo "$next" | jsonl 'rows[0]["recordName"]')" = "$(echo "$all4" | jsonl 'rows[0]["recordName"]')" ] && ok "--continue MARKER reads on from the next record" || bad "continue: $next / $all4"
"$BIN" query Artwork --zone Gallery --filter '___recordID EQUALS artwork-0001' > "$WORK/sys.jsonl" 2> "$WORK/err"; code=$?
[ $code = 0 ] && [ "$(jsonl '[r["recordName"] for r in rows]' < "$WORK/sys.jsonl")" = "['artwork-0001']" ] && ok "a system field by its schema name (___recordID) filters as recordName does" || bad "___recordID: exit $code $(cat "$WORK/sys.jsonl" "$WORK/err")"
out=$("$BIN" get artwork-0001 artwork-0002 --zone Gallery); code=$?
[ $code = 0 ] && [ "$(echo "$out" | jsonl 'len(rows)')" = 2 ] && ok "get: two records, exit 0" || bad "get: exit $code"
"$BIN" get artwork-0001 missing-one --zone Gallery > "$WORK/get.jsonl"; code=$?
[ $code = 3 ] && grep -q '"serverErrorCode":"NOT_FOUND"' "$WORK/get.jsonl" && ok "get a missing record: its error dictionary, exit 3" || bad "get missing: exit $code"
out=$("$BIN" get artwork-0001 missing-one --zone Gallery --output table 2> "$WORK/err"); code=$?
[ $code = 3 ] && echo "$out" | grep -q "^missing-one  *error: NOT_FOUND" && ! echo "$out" | grep "^missing-one" | grep -q "  NOT_FOUND" \
    && grep -q "^ckbrowse: 'missing-one': error: NOT_FOUND" "$WORK/err" \
    && ok "get --output table: a missing record says error: NOT_FOUND across its row (not under MODIFIED) and on stderr, exit 3" \
    || bad "get table missing: exit $code $out $(cat "$WORK/err")"
"$BIN" changes NoSuchZone > /dev/null 2> "$WORK/err"; code=$?
[ $code = 3 ] && grep -q "ZONE_NOT_FOUND" "$WORK/err" && ok "an unknown zone: exit 3 and the server's reason" || bad "unknown zone: exit $code $(cat "$WORK/err")"
CLOUDKIT_WEB_AUTH_TOKEN=expired "$BIN" zones > /dev/null 2> "$WORK/err"; code=$?
[ $code = 4 ] && ! grep -q "expired" "$WORK/err" && ok "an unknown web auth token: exit 4, token not echoed" || bad "auth: exit $code $(cat "$WORK/err")"
"$BIN" query Artwork --filter 'year' > /dev/null 2> "$WORK/err"; code=$?
[ $code = 64 ] && ok "a malformed --filter: usage error, exit 64" || bad "bad filter: exit $code"
out=$("$BIN" subscriptions); [ "$(echo "$out" | jsonl 'len(rows)')" = 5 ] && ok "subscriptions: 5, one per line" || bad "subscriptions: $out"
detail=$("$BIN" subscriptions gallery-zone --output table)
grep -q '"subscriptionType" : "zone"\|"subscriptionType": "zone"' <<< "$detail" && ok "subscriptions ID: the whole definition" || bad "subscription detail"
"$BIN" subscriptions nope > /dev/null; [ $? = 3 ] && ok "an unknown subscription: exit 3" || bad "unknown subscription"
# Captured first: with pipefail, `grep -q` quitting early would fail the pipeline through SIGPIPE.
completions=$("$BIN" --generate-completion-script bash)
grep -q "_ckbrowse" <<< "$completions" && ok "bash completions are generated" || bad "no completions"
# Connection options before the subcommand work as after it.
out=$(env -u CLOUDKIT_CONTAINER "$BIN" --container iCloud.com.example.Gallery --database private zones)
[ "$(echo "$out" | jsonl 'len(rows)')" = 3 ] && ok "--container before the subcommand" || bad "options before the subcommand: $out"
# --json: one document (an array) instead of JSON lines.
out=$("$BIN" zones --json)
python3 -c 'import json, sys; d = json.load(sys.stdin); assert isinstance(d, list) and len(d) == 3' <<< "$out"     && ok "zones --json: one JSON array" || bad "zones --json: $out"
out=$("$BIN" --json query Artwork --zone Gallery --filter 'year LESS_THAN 1900')
python3 -c 'import json, sys; d = json.load(sys.stdin); assert isinstance(d, list) and d and all("recordName" in r for r in d)' <<< "$out"     && ok "query --json: one JSON array of records" || bad "query --json: ${out:0:200}"
out=$("$BIN" changes Drafts --json)
python3 -c 'import json, sys; d = json.load(sys.stdin); assert len(d["records"]) == 25 and any(r.get("recordType") == "cloudkit.share" for r in d["records"]) and "syncToken" in d' <<< "$out"     && ok "changes --json: one document with the records and the sync token" || bad "changes --json: ${out:0:200}"
# Missing credentials: exit 4, naming what is missing, no usage text.
msg=$(env -u CLOUDKIT_API_TOKEN -u CLOUDKIT_WEB_AUTH_TOKEN "$BIN" --container iCloud.example.Other zones 2>&1); code=$?
[ $code = 4 ] && grep -q "no credentials for iCloud.example.Other: set CLOUDKIT_API_TOKEN" <<< "$msg"     && ok "missing credentials: exit 4, says what to set" || bad "missing credentials: exit $code: $msg"
# An unreachable server fails fast, naming it.
start=$SECONDS
msg=$("$BIN" --server http://127.0.0.1:9 zones 2>&1); code=$?
[ $code = 1 ] && grep -q "http://127.0.0.1:9" <<< "$msg" && [ $((SECONDS - start)) -le 6 ]     && ok "an unreachable server: exit 1 within $((SECONDS - start)) s, naming http://127.0.0.1:9" || bad "unreachable: exit $code after $((SECONDS - start)) s: $msg"
# The demo by its container name, and its production environment (seeded, not development shown as production).
out=$(env -u CLOUDKIT_SERVER -u CLOUDKIT_API_TOKEN -u CLOUDKIT_WEB_AUTH_TOKEN HOME="$WORK/home" XDG_DATA_HOME=     "$BIN" --container iCloud.com.example.Gallery --environment production zones --output table)
echo "$out" | grep -q "^Gallery " && ok "the demo container by name, production environment seeded" || bad "demo production: $out"
[ -d "$WORK/home/.local/share/ckbrowse/demo" ] && ok "with XDG_DATA_HOME unset, the demo lives under \$HOME" || bad "demo data not under \$HOME"
# Schema files: the serve data directory's schema exported as .ckdb, valid; a broken file names its line.
"$BIN" schema export --data "$WORK/data" > "$WORK/gallery.ckdb"; code=$?
[ $code = 0 ] && grep -q "^    RECORD TYPE Artwork ($" "$WORK/gallery.ckdb" && grep -q "^        title  *STRING QUERYABLE SEARCHABLE SORTABLE,$" "$WORK/gallery.ckdb" \
    && ok "schema export: the data directory's record types as .ckdb" || bad "schema export: exit $code: $(head -5 "$WORK/gallery.ckdb")"
msg=$("$BIN" schema validate "$WORK/gallery.ckdb"); code=$?
[ $code = 0 ] && grep -q "valid: 5 record types" <<< "$msg" && ok "schema validate: the export is valid" || bad "schema validate: exit $code: $msg"
printf 'DEFINE SCHEMA\n    RECORD TYPE A (\n        n INT64 SEARCHABLE\n    );\n' > "$WORK/bad.ckdb"
msg=$("$BIN" schema validate "$WORK/bad.ckdb" 2>&1); code=$?
[ $code = 1 ] && grep -q "bad.ckdb:3:9: SEARCHABLE is not allowed on n (INT64)" <<< "$msg" && ok "schema validate: a broken file fails at its line and column" || bad "schema validate bad: exit $code: $msg"

# Through the server's schema endpoint: the same export; an imported file that drops an index makes
# the server refuse a query with CloudKit's reason; deploy; reset only once confirmed.
"$BIN" schema export > "$WORK/served.ckdb"; code=$?
[ $code = 0 ] && cmp -s "$WORK/served.ckdb" "$WORK/gallery.ckdb" && ok "schema export through the endpoint: the same file" || bad "schema export (server): exit $code"
sed 's/^\(        year  *INT64\) QUERYABLE SORTABLE,$/\1 SORTABLE,/' "$WORK/gallery.ckdb" > "$WORK/noindex.ckdb"
msg=$("$BIN" schema import "$WORK/noindex.ckdb" 2>&1); code=$?
[ $code = 0 ] && grep -q "imported" <<< "$msg" && ok "schema import: accepted" || bad "schema import: exit $code: $msg"
"$BIN" query Artwork --zone Gallery --filter 'year EQUALS 1900' > /dev/null 2> "$WORK/err"; code=$?
[ $code = 1 ] && grep -q "Field 'year' is not marked queryable" "$WORK/err" && ok "a query the schema's indexes do not allow: refused with CloudKit's reason" || bad "unindexed query: exit $code: $(cat "$WORK/err")"
out=$("$BIN" query Artwork --zone Gallery --filter 'year LESS_THAN 1900' --limit 1); code=$?
[ $code = 0 ] && [ -n "$out" ] && ok "a range filter on the SORTABLE field still runs" || bad "sortable range: exit $code"
msg=$("$BIN" schema deploy 2>&1); code=$?
[ $code = 0 ] && grep -q "development's schema is now production's" <<< "$msg" && ok "schema deploy" || bad "schema deploy: exit $code: $msg"
printf 'DEFINE SCHEMA\n    RECORD TYPE Artwork (title STRING);\n' > "$WORK/shrink.ckdb"
msg=$("$BIN" schema validate "$WORK/shrink.ckdb" 2>&1); code=$?
[ $code = 1 ] && grep -q "record type 'Artist' is in production and cannot be removed" <<< "$msg" && ok "schema validate against the server: what production would refuse" || bad "validate vs production: exit $code: $msg"
msg=$("$BIN" schema reset < /dev/null 2>&1); code=$?
[ $code = 64 ] && grep -q "confirm with --confirm iCloud.com.example.Gallery" <<< "$msg" && ok "schema reset without confirmation: refused, nothing changed" || bad "reset unconfirmed: exit $code: $msg"
msg=$("$BIN" schema reset --confirm iCloud.com.example.Gallery 2>&1); code=$?
out=$("$BIN" zones)
[ $code = 0 ] && grep -q "deleted development data" <<< "$msg" && [ "$(echo "$out" | jsonl 'len(rows)')" = 1 ] && ok "schema reset --confirm: development data deleted" || bad "reset: exit $code: $msg / $out"
# serve --schema: a broken file stops the start at its line; a good one is imported.
msg=$("$BIN" serve --data "$WORK/data2" --port 0 --container iCloud.example.S --schema "$WORK/bad.ckdb" 2>&1); code=$?
[ $code = 64 ] && grep -q "bad.ckdb:3:9: SEARCHABLE is not allowed" <<< "$msg" && ok "serve --schema with a broken file: exit 64 at its line" || bad "serve --schema bad: exit $code: $msg"
"$BIN" serve --data "$WORK/data2" --port 0 --api-token t --container iCloud.example.S --schema "$WORK/gallery.ckdb" > "$WORK/serve2.log" 2>&1 & PID2=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/serve2.log" && break; sleep 0.1; done
kill $PID2; wait $PID2 2>/dev/null
grep -q "imported $WORK/gallery.ckdb into iCloud.example.S (development)" "$WORK/serve2.log" && ok "serve --schema: imported at start" || bad "serve --schema: $(cat "$WORK/serve2.log")"

# The server as a test fixture: --in-memory with a --config file, /ready, a snapshot at exit, --import.
cat > "$WORK/serve.toml" <<TOML
container = "iCloud.example.Fixture"
[[api-tokens]]
token = "fixture-token"
[[users]]
name = "tess"
token = "tess-token"
email = "tess@example.com"
TOML
"$BIN" serve --in-memory --port 0 --config "$WORK/serve.toml" --export-on-exit "$WORK/snap" > "$WORK/mem.log" 2>&1 & MEM=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/mem.log" && break; sleep 0.1; done
MURL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/mem.log" | head -1)
grep -q "(data: in memory)" "$WORK/mem.log" && ok "serve --in-memory says where its data is" || bad "in-memory: $(cat "$WORK/mem.log")"
[ "$(curl -s "$MURL/ready")" = '{"ready":true}' ] && ok "GET /ready answers once the server listens" || bad "/ready"
F="$MURL/database/1/iCloud.example.Fixture/development/private"
out=$(curl -s -X POST "$F/records/modify?ckAPIToken=fixture-token&ckWebAuthToken=tess-token" -d '{"operations":[{"operationType":"create","record":{"recordName":"kept","recordType":"T"}}]}')
grep -q '"recordName":"kept"' <<< "$out" && ok "--config: its user and token, bound to its container" || bad "config write: $out"
other=$(curl -s -o /dev/null -w '%{http_code}' "$MURL/database/1/iCloud.example.Elsewhere/development/private/zones/list?ckAPIToken=fixture-token&ckWebAuthToken=tess-token")
[ "$other" = 401 ] && ok "the token is refused for another container" || bad "other container: $other"
kill $MEM; wait $MEM 2>/dev/null
# A misspelt key inside a table fails the start: `contianer` would leave the token valid everywhere.
printf '[[api-tokens]]\ntoken = "typo-token"\ncontianer = "iCloud.example.Only"\n' > "$WORK/typo.toml"
out=$(timeout 20 "$BIN" serve --in-memory --port 0 --config "$WORK/typo.toml" 2>&1); code=$?
[ "$code" -ne 0 ] && grep -q "unknown key 'contianer' in api-tokens\[0\]" <<< "$out" && ok "--config: a misspelt key in [[api-tokens]] stops the start, named" || bad "typo: $code $out"
[ -f "$WORK/snap/cloudkit.sqlite" ] && grep -q ckbrowse-snapshot "$WORK/snap/snapshot.json" && ok "--export-on-exit wrote a snapshot" || bad "no snapshot: $(cat "$WORK/mem.log")"
"$BIN" serve --in-memory --port 0 --config "$WORK/serve.toml" --import "$WORK/snap" > "$WORK/mem2.log" 2>&1 & MEM=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/mem2.log" && break; sleep 0.1; done
MURL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/mem2.log" | head -1)
out=$(curl -s -X POST "$MURL/database/1/iCloud.example.Fixture/development/private/records/lookup?ckAPIToken=fixture-token&ckWebAuthToken=tess-token" -d '{"records":[{"recordName":"kept"}]}')
grep -q '"recordType":"T"' <<< "$out" && ok "--import starts from the snapshot" || bad "import: $out"
reset=$(curl -s -X POST "$MURL/admin/1/iCloud.example.Fixture/development/reset?ckAPIToken=fixture-token")
grep -q '"records":1' <<< "$reset" && ok "POST /admin/1/…/reset wipes the container between tests" || bad "reset: $reset"
kill $MEM; wait $MEM 2>/dev/null
# A reset returns the container to what the server started with: the --schema file's types and
# indexes stay for the next test (they were dropped with the data before).
cat > "$WORK/fixture.ckdb" <<'CKDB'
DEFINE SCHEMA
    RECORD TYPE Task (
        "___recordID" REFERENCE QUERYABLE,
        n             INT64 QUERYABLE SORTABLE,
        GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world"
    );
CKDB
"$BIN" serve --in-memory --port 0 --api-token fx-token --user "fx:fx-user" --container iCloud.example.Fixture2 --schema "$WORK/fixture.ckdb" > "$WORK/fx.log" 2>&1 & FX=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/fx.log" && break; sleep 0.1; done
FXURL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/fx.log" | head -1)
FXDB="$FXURL/database/1/iCloud.example.Fixture2/development/private"
FXQ='{"query":{"recordType":"Task","filterBy":[{"fieldName":"n","comparator":"LESS_THAN","fieldValue":{"value":2,"type":"INT64"}}],"sortBy":[{"fieldName":"n","ascending":false}]}}'
kept=yes
for round in 1 2 3; do
    curl -s -X POST "$FXDB/records/modify?ckAPIToken=fx-token&ckWebAuthToken=fx-user" \
        -d '{"operations":[{"operationType":"create","record":{"recordName":"t'$round'-0","recordType":"Task","fields":{"n":{"value":0},"jit'$round'":{"value":"x"}}}},{"operationType":"create","record":{"recordName":"t'$round'-1","recordType":"Task","fields":{"n":{"value":1}}}},{"operationType":"create","record":{"recordName":"t'$round'-5","recordType":"Task","fields":{"n":{"value":5}}}}]}' > /dev/null
    names=$(curl -s -X POST "$FXDB/records/query?ckAPIToken=fx-token&ckWebAuthToken=fx-user" -d "$FXQ" | grep -o '"recordName":"t[^"]*"' | tr '\n' ' ')
    [ "$names" = '"recordName":"t'$round'-1" "recordName":"t'$round'-0" ' ] || { kept="round $round: $names"; break; }
    curl -s -X POST "$FXURL/admin/1/iCloud.example.Fixture2/development/reset?ckAPIToken=fx-token" > /dev/null
done
schema=$(curl -s "$FXURL/schema/1/iCloud.example.Fixture2/development?ckAPIToken=fx-token")
[ "$kept" = yes ] && grep -q "INT64 QUERYABLE SORTABLE" <<< "$schema" && ! grep -q jit <<< "$schema" \
    && ok "a reset keeps the --schema file's types and indexes (what tests created just in time goes)" || bad "reset and --schema: $kept / $schema"
kill $FX; wait $FX 2>/dev/null
msg=$("$BIN" serve --data "$WORK/data" --port 0 --import "$WORK/snap" 2>&1); code=$?
[ $code = 64 ] && grep -q "already holds data" <<< "$msg" && ok "--import refuses a data directory that holds data" || bad "import over data: exit $code: $msg"

# Subscriptions move between containers: create from a file, list --json, create that into another.
"$BIN" serve --in-memory --port 0 --api-token sub-token --user "sam:sam-token" > "$WORK/subs.log" 2>&1 & SUBS=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/subs.log" && break; sleep 0.1; done
SURL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/subs.log" | head -1)
subs() { CLOUDKIT_SERVER=$SURL CLOUDKIT_CONTAINER=$1 CLOUDKIT_API_TOKEN=sub-token CLOUDKIT_WEB_AUTH_TOKEN=sam-token "$BIN" subscriptions "${@:2}"; }
for c in iCloud.example.SubsA iCloud.example.SubsB; do
    curl -s -X POST "$SURL/database/1/$c/development/private/zones/modify?ckAPIToken=sub-token&ckWebAuthToken=sam-token" \
        -d '{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Z"}}}]}' > /dev/null
done
cat > "$WORK/subs.json" <<'JSON'
[{"subscriptionID": "notes-created", "subscriptionType": "query", "query": {"recordType": "Note", "filterBy": [{"fieldName": "n", "comparator": "GREATER_THAN", "fieldValue": {"value": 3, "type": "INT64"}}]},
  "zoneID": {"zoneName": "Z"}, "firesOn": ["create", "update"], "notificationInfo": {"alertBody": "a note", "shouldSendContentAvailable": true}},
 {"subscriptionID": "z-zone", "subscriptionType": "zone", "zoneID": {"zoneName": "Z"}}]
JSON
out=$(subs iCloud.example.SubsA create "$WORK/subs.json" --dry-run)
grep -q '"path" : "/database/1/iCloud.example.SubsA/development/private/subscriptions/modify"\|"path": "/database/1/iCloud.example.SubsA/development/private/subscriptions/modify"' <<< "$out" && ! grep -q sam-token <<< "$out" \
    && ok "subscriptions create --dry-run prints the request, no token" || bad "dry run: $out"
subs iCloud.example.SubsA create "$WORK/subs.json" > "$WORK/created.jsonl"; code=$?
[ $code = 0 ] && [ "$(jsonl 'len(rows)' < "$WORK/created.jsonl")" = 2 ] && ok "subscriptions create FILE: both created" || bad "create: exit $code $(cat "$WORK/created.jsonl")"
subs iCloud.example.SubsA --json > "$WORK/a.json"
subs iCloud.example.SubsB create "$WORK/a.json" > /dev/null; code=$?
subs iCloud.example.SubsB --json > "$WORK/b.json"
same=$(python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); key = lambda s: s["subscriptionID"]; print(sorted(a, key=key) == sorted(b, key=key) and len(a) == 2)' "$WORK/a.json" "$WORK/b.json")
[ $code = 0 ] && [ "$same" = True ] && ok "what subscriptions --json prints, create takes back: the same subscriptions in another container" || bad "round trip: exit $code $(cat "$WORK/a.json") / $(cat "$WORK/b.json")"
subs iCloud.example.SubsB delete z-zone > /dev/null; code=$?
[ $code = 0 ] && [ "$(subs iCloud.example.SubsB | jsonl 'len(rows)')" = 1 ] && ok "subscriptions delete ID" || bad "delete: exit $code"
subs iCloud.example.SubsB delete z-zone > /dev/null; code=$?
[ $code = 3 ] && ok "deleting it again: exit 3 (not found)" || bad "delete again: exit $code"
echo '{"subscriptionID": "bad", "subscriptionType": "query", "query": {"recordType": "Note"}}' > "$WORK/bad.json"
subs iCloud.example.SubsB create "$WORK/bad.json" > "$WORK/bad.out"; code=$?
[ $code = 1 ] && grep -q "firesOn" "$WORK/bad.out" && ok "a subscription the server refuses: its reason, exit 1" || bad "refused: exit $code $(cat "$WORK/bad.out")"
msg=$(CLOUDKIT_ENVIRONMENT=production subs iCloud.example.SubsB create "$WORK/subs.json" 2>&1); code=$?
[ $code = 1 ] && grep -q "cannot be created in production" <<< "$msg" && ok "production: refused before anything is sent" || bad "production: exit $code $msg"
# Creates are checked against what the server holds: the same definition again is fine (a copy run
# twice), another one under an existing ID or a query subscription's twin is said, and nothing is sent.
subs iCloud.example.SubsA create "$WORK/subs.json" > /dev/null 2> "$WORK/err"; code=$?
[ $code = 0 ] && ok "subscriptions create of the same definitions again: exit 0" || bad "again: exit $code $(cat "$WORK/err")"
# What another container's --json printed (its zones' owner named) is the same definitions here too.
subs iCloud.example.SubsB create "$WORK/a.json" > /dev/null 2> "$WORK/err"; code=$?
[ $code = 0 ] && grep -q ownerRecordName "$WORK/a.json" && ok "the same copy again, owners named: exit 0" || bad "copy again: exit $code $(cat "$WORK/err")"
sed 's/"a note"/"a changed note"/' "$WORK/subs.json" > "$WORK/subs-changed.json"
subs iCloud.example.SubsA create "$WORK/subs-changed.json" > /dev/null 2> "$WORK/err"; code=$?
kept=$(subs iCloud.example.SubsA notes-created --json)
[ $code = 1 ] && grep -q "subscription 'notes-created' exists with another definition: .* --update" "$WORK/err" && grep -q '"a note"' <<< "$kept" \
    && ok "create over an existing ID with another definition: refused, --update named, nothing sent" || bad "changed: exit $code $(cat "$WORK/err") $kept"
subs iCloud.example.SubsA create "$WORK/subs-changed.json" --update > /dev/null 2> "$WORK/err"; code=$?
[ $code = 0 ] && grep -q '"a changed note"' <<< "$(subs iCloud.example.SubsA notes-created --json)" && ok "and --update sends it" || bad "update: exit $code $(cat "$WORK/err")"
echo '{"subscriptionID": "twin", "subscriptionType": "query", "query": {"recordType": "Note"}, "zoneID": {"zoneName": "Z"}, "firesOn": ["update", "create"]}' > "$WORK/twin.json"
subs iCloud.example.SubsA create "$WORK/twin.json" > /dev/null 2> "$WORK/err"; code=$?
[ $code = 1 ] && grep -q "'twin': 'notes-created' already watches Note on create, update" "$WORK/err" && ok "a query subscription's twin is named before it is sent" || bad "twin: exit $code $(cat "$WORK/err")"
kill $SUBS; wait $SUBS 2>/dev/null

# Mistakes get words, not a usage dump: a mistyped subcommand, a query filter of the wrong kind, a
# file that cannot be read, a port already taken.
"$BIN" frob > /dev/null 2> "$WORK/err"; code=$?
[ $code = 64 ] && grep -q "unknown subcommand 'frob' (one of browse, zones" "$WORK/err" && ok "a mistyped subcommand is named as one" || bad "frob: exit $code $(cat "$WORK/err")"
"$BIN" browse --help 2>&1 | grep -q "^OVERVIEW: Browse a CloudKit container" && ok "browse --help still shows browse's help" || bad "browse --help"
"$BIN" query Artwork --zone Gallery --filter 'year LESS_THAN abc' > /dev/null 2> "$WORK/err"; code=$?
[ $code != 0 ] && grep -q "Field 'year' is INT64: LESS_THAN cannot compare it with a value of type STRING" "$WORK/err" \
    && ok "a filter value of another kind than its field is refused (exit $code)" || bad "mismatched filter: exit $code $(cat "$WORK/err")"
"$BIN" apply "$WORK" > /dev/null 2> "$WORK/err"; code=$?
[ $code = 64 ] && grep -q "cannot read $WORK: it is a directory" "$WORK/err" && ok "apply of a directory says why it cannot be read" || bad "apply dir: exit $code $(cat "$WORK/err")"
CLOUDKIT_SERVER=not-a-url "$BIN" zones > /dev/null 2> "$WORK/err"; code=$?
[ $code = 64 ] && grep -q "the server 'not-a-url' is not a URL" "$WORK/err" && ! grep -q "Usage: ckbrowse <subcommand>" "$WORK/err" \
    && ok "a server that is not a URL is said so, without the top-level usage" || bad "not-a-url: exit $code $(cat "$WORK/err")"
port=${CLOUDKIT_SERVER##*:}
"$BIN" serve --in-memory --port "$port" > /dev/null 2> "$WORK/err"; code=$?
[ $code = 1 ] && grep -q "port $port on 127.0.0.1 is in use" "$WORK/err" && ok "serve on a port in use says so" || bad "serve busy port: exit $code $(cat "$WORK/err")"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
