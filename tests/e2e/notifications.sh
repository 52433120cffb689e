#!/usr/bin/env bash
# End-to-end: the Notifications pane in the real browser (tmux) against `ckbrowse serve` on loopback;
# another client writes through the API with curl. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
[ -x "$BIN" ] || swift build --product ckbrowse >/dev/null
WORK=$(mktemp -d)
SOCK_BASE="ckb-push-$$"
SOCK="$SOCK_BASE-0"
SESSIONS=0
passed=0; failed=0
cleanup() {
    for i in $(seq 0 "$SESSIONS"); do tmux -L "$SOCK_BASE-$i" kill-server 2>/dev/null; done
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
new_session() {
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1))
    SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x 100 -y 30 "$1"
}
ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; echo "----- screen -----"; tmux -L "$SOCK" capture-pane -p 2>/dev/null | sed 's/^/  | /'; echo "------------------"; }
screen() { tmux -L "$SOCK" capture-pane -p 2>/dev/null; }
wait_for() {
    local deadline=$((SECONDS + ${2:-15}))
    while [ $SECONDS -lt $deadline ]; do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
wait_gone() {
    local deadline=$((SECONDS + ${2:-15}))
    while [ $SECONDS -lt $deadline ]; do
        screen | grep -qF -- "$1" || return 0
        sleep 0.1
    done
    return 1
}
check() { if wait_for "$2" "${3:-15}"; then ok "$1"; else bad "$1 (waited for: $2)"; fi; }
keys() { tmux -L "$SOCK" send-keys "$@"; }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_server() {
    "$BIN" serve --data "$WORK/data" --port "$PORT" --seed demo > "$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 300); do grep -q "listening on" "$WORK/serve.log" && break; sleep 0.1; done
}
start_server
URL="http://127.0.0.1:$PORT"
grep -q "listening on $URL" "$WORK/serve.log" || { echo "server did not start"; cat "$WORK/serve.log"; echo "0 passed, 1 failed"; exit 1; }
API="ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token"
DB="$URL/database/1/iCloud.com.example.Gallery/development/private"
write() { curl -s -X POST "$DB/records/modify?$API" -d "{\"zoneID\":{\"zoneName\":\"Gallery\"},\"atomic\":false,\"operations\":[$1]}" > /dev/null; }
now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

cat > "$WORK/tmux.conf" <<CONF
set -g default-terminal tmux-256color
set -g remain-on-exit on
set -g status off
CONF
new_session "env LANG=C.UTF-8 TERM=tmux-256color XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state \
  CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private \
  CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token $BIN"
check "the browser starts" "3 zones" 60
keys N
check "N registers a push token and listens" "● listening: push token for iCloud.com.example.Gallery (development)"

# A matching write by another client appears within a second.
t0=$(now_ms)
write '{"operationType":"forceUpdate","record":{"recordName":"artwork-0001","fields":{"title":{"value":"Pushed by curl","type":"STRING"}}}}'
if wait_for "title=Pushed" 5; then
    elapsed=$(( $(now_ms) - t0 ))
    if [ "$elapsed" -lt 1000 ]; then ok "the push is on screen ${elapsed} ms after the write"; else bad "the push took ${elapsed} ms (more than a second)"; fi
else bad "the push did not arrive"; fi
check "reason, database, zone and record are shown" "artwork-changes      updated  private Gallery      artwork-0001"
check "the zone subscription fired too" "gallery-zone         zone     private Gallery"
# Enter on the query notification opens the record.
keys j Enter
check "Enter opens the notified record" "Pushed by curl"
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
