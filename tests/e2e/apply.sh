#!/usr/bin/env bash
# End-to-end: `ckbrowse apply` against `ckbrowse serve` on loopback; server state checked through the API.
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
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/serve.log" | head -1)
export CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private
export CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token
lookup() {
    curl -s -X POST "$URL/database/1/iCloud.com.example.Gallery/development/private/records/lookup?ckAPIToken=$CLOUDKIT_API_TOKEN&ckWebAuthToken=$CLOUDKIT_WEB_AUTH_TOKEN" \
        -d "{\"zoneID\":{\"zoneName\":\"Gallery\"},\"records\":[{\"recordName\":\"$1\"}]}"
}

cat > "$WORK/batch.json" <<'JSON'
{ "zoneID": { "zoneName": "Gallery" },
  "operations": [
    { "operationType": "forceUpdate", "record": { "recordName": "artwork-0001", "fields": { "title": { "value": "Retitled by apply", "type": "STRING" } } } },
    { "operationType": "forceDelete", "record": { "recordName": "note-1" } } ] }
JSON
out=$("$BIN" apply --dry-run "$WORK/batch.json"); code=$?
if [ $code -eq 0 ] && echo "$out" | grep -q '"path": "/database/1/iCloud.com.example.Gallery/development/private/records/modify"' && echo "$out" | grep -q '"atomic": true'; then
    ok "--dry-run prints the request, atomic by default"; else bad "--dry-run: $out"; fi
if echo "$out" | grep -q "$CLOUDKIT_WEB_AUTH_TOKEN\|$CLOUDKIT_API_TOKEN"; then bad "--dry-run printed a token"; else ok "--dry-run prints no token"; fi
lookup artwork-0001 | grep -q "Retitled by apply" && bad "--dry-run wrote" || ok "--dry-run sends nothing"

out=$("$BIN" apply "$WORK/batch.json"); code=$?
if [ $code -eq 0 ] && echo "$out" | grep -q '"recordName":"artwork-0001".*"status":"saved"' && echo "$out" | grep -q '"recordName":"note-1".*"status":"deleted"'; then
    ok "apply: per-record results as JSON, exit 0"; else bad "apply: exit $code, $out"; fi
lookup artwork-0001 | grep -q "Retitled by apply" && ok "the update is on the server" || bad "the update is not on the server"
lookup note-1 | grep -q NOT_FOUND && ok "the delete is on the server" || bad "the delete is not on the server"

cat > "$WORK/stale.json" <<'JSON'
{ "zoneID": { "zoneName": "Gallery" },
  "operations": [
    { "operationType": "forceUpdate", "record": { "recordName": "artwork-0002", "fields": { "title": { "value": "must not land", "type": "STRING" } } } },
    { "operationType": "update", "record": { "recordName": "artwork-0004", "recordChangeTag": "stale", "fields": { "title": { "value": "x", "type": "STRING" } } } } ] }
JSON
out=$("$BIN" apply "$WORK/stale.json" 2> "$WORK/err.txt"); code=$?
if [ $code -eq 2 ] && echo "$out" | grep -q '"serverErrorCode":"CONFLICT"' && echo "$out" | grep -q '"serverErrorCode":"ATOMIC_ERROR"' && grep -q "nothing was applied" "$WORK/err.txt"; then
    ok "a stale tag: CONFLICT + ATOMIC_ERROR, exit 2, nothing applied"; else bad "stale: exit $code, $out"; fi
lookup artwork-0002 | grep -q "must not land" && bad "a failed atomic batch wrote" || ok "the failed atomic batch wrote nothing"

sed 's/"Gallery"/"NoSuchZone"/' "$WORK/batch.json" > "$WORK/nozone.json"
"$BIN" apply "$WORK/nozone.json" > /dev/null 2> "$WORK/err.txt"; code=$?
[ $code -eq 3 ] && grep -q "ZONE_NOT_FOUND" "$WORK/err.txt" && ok "an unknown zone: ZONE_NOT_FOUND, exit 3 (as the read commands)" || bad "unknown zone: exit $code, $(cat "$WORK/err.txt")"
CLOUDKIT_WEB_AUTH_TOKEN=not-a-token "$BIN" apply "$WORK/batch.json" > /dev/null 2> "$WORK/err.txt"; code=$?
[ $code -eq 4 ] && ok "a refused token: exit 4" || bad "refused token: exit $code, $(cat "$WORK/err.txt")"
grep -q "not-a-token" "$WORK/err.txt" && bad "the refused token was printed" || ok "the refused token is not printed"

"$BIN" apply --read-only "$WORK/batch.json" > /dev/null 2> "$WORK/err.txt"; code=$?
[ $code -eq 5 ] && grep -q "read-only" "$WORK/err.txt" && ok "--read-only refuses (exit 5)" || bad "--read-only: exit $code"
echo '{"operations": [' > "$WORK/broken.json"
"$BIN" apply "$WORK/broken.json" > /dev/null 2> "$WORK/err.txt"; code=$?
[ $code -eq 64 ] && grep -q "not a records/modify body" "$WORK/err.txt" && ok "a broken file: clear error, exit 64" || bad "broken file: exit $code"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
