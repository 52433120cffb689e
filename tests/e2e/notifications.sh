#!/usr/bin/env bash
# End-to-end: the Notifications pane in the real browser (tmux) against `ckbrowse serve` on loopback;
# another client writes through the API with curl. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=push
source tests/e2e/lib.sh

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_server() {
    rm -f "$WORK/serve.log"  # an earlier server's "listening on" must not be read as this one's
    "$BIN" serve --data "$WORK/data" --port "$PORT" --seed demo > "$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 300); do grep -qs "listening on" "$WORK/serve.log" && break; sleep 0.1; done
}
start_server
URL="http://127.0.0.1:$PORT"
grep -q "listening on $URL" "$WORK/serve.log" || { echo "server did not start"; cat "$WORK/serve.log"; echo "0 passed, 1 failed"; exit 1; }
API="ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token"
DB="$URL/database/1/iCloud.com.example.Gallery/development/private"
write() { curl -s -X POST "$DB/records/modify?$API" -d "{\"zoneID\":{\"zoneName\":\"Gallery\"},\"atomic\":false,\"operations\":[$1]}" > /dev/null; }
now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

new_session "$WORK/tmux.conf" "env LANG=C.UTF-8 TERM=tmux-256color XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state \
  CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private \
  CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token $BIN"
check "the browser starts" "3 zones" 60
keys N
check "N registers a push token and listens" "push token for iCloud.com.example.Gallery (development)"

# A matching write by another client appears within a second.
t0=$(now_ms)
write '{"operationType":"forceUpdate","record":{"recordName":"artwork-0001","fields":{"title":{"value":"Pushed by curl","type":"STRING"}}}}'
if wait_for "title=Pushed" 5; then
    elapsed=$(( $(now_ms) - t0 ))
    if [ "$elapsed" -lt 1000 ]; then ok "the push is on screen ${elapsed} ms after the write"; else bad "the push took ${elapsed} ms (more than a second)"; fi
else bad "the push did not arrive"; fi
check "reason, database, zone and record are shown" "artwork-changes      updated  private Gallery      artwork-0001"
check "the zone subscription fired too" "gallery-zone         zone     private Gallery"
# Enter on the query notification shows the push in full, its keys named; o opens the record.
keys j Enter
check "Enter shows the push in full" "KEYS, NAMED"
check "with the record key named" "ck.qry.rid"
check "and the reason read" "reason: updated"
keys o
check "o opens the notified record" "Pushed by curl"
keys Escape
check "Esc goes back to the push" "THE PAYLOAD AS RECEIVED"
keys Escape

# firesOnce: the subscription disappears when it fires.
keys s
check "the firesOnce subscription is listed" "first-new-exhibition"
write '{"operationType":"create","record":{"recordName":"exh-e2e","recordType":"Exhibition","fields":{"rating":{"value":4.9,"type":"DOUBLE"}}}}'
check "the browser says it fired once" "fired once: the server deleted it"
if wait_gone "query  Exhibition" 10; then ok "the firesOnce subscription disappeared"; else bad "first-new-exhibition is still listed"; fi
keys Enter
check "the subscription detail lists its pushes this session" "NOTIFICATIONS THIS SESSION"
keys Escape Escape

# The server goes away: the status bar says so; after a restart the browser reconnects and says
# what cannot be recovered.
keys N
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
check "a lost long-poll shows as disconnected" "pushes: disconnected"
check "with the retry" "retrying in"
start_server
check "it reconnects by itself" "● listening" 30
check "and says missed pushes are lost" "pushes sent then are lost"
write '{"operationType":"forceUpdate","record":{"recordName":"artwork-0002","fields":{"title":{"value":"Restarted","type":"STRING"}}}}'
check "pushes arrive again after the reconnect" "title=Restarted"
if tmux -L "$SOCK" capture-pane -p | grep -q "ckbrowse-demo-web-auth-token\|ckbrowse-demo-api-token"; then bad "a token is on screen"; else ok "no token on screen"; fi
keys q

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
