#!/usr/bin/env bash
# Secrets never leak: a full session (browser in tmux, headless commands, errors, --help, a crash)
# runs with distinctive API and web auth tokens and a server-to-server private key; every screen,
# every stdout/stderr, the server's log, and the browser's cache, journal and data directories are
# grepped for them. Cache and journal files must be owner-only. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
WORK=$(mktemp -d); SOCK="ckb-sec-$$"; passed=0; failed=0
trap 'tmux -L $SOCK kill-server 2>/dev/null; [ -n "${SERVER_PID:-}" ] && kill $SERVER_PID 2>/dev/null; rm -rf $WORK' EXIT
ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; }
API="SECRET-API-$RANDOM$RANDOM-$$"
WEB="SECRET-WEB+$RANDOM/$RANDOM=$$"
OUT="$WORK/out"; mkdir -p "$OUT"
openssl ecparam -genkey -name prime256v1 -noout -out "$WORK/key.pem" 2>/dev/null
chmod 600 "$WORK/key.pem"
openssl ec -in "$WORK/key.pem" -pubout -out "$WORK/pub.pem" 2>/dev/null
KEY_CHUNK=$(sed -n 2p "$WORK/key.pem" | cut -c1-40)

"$BIN" serve --data "$WORK/data" --port 0 --seed demo --api-token "$API" --user "demo:$WEB" --server-key "kid-1:$WORK/pub.pem" > "$OUT/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do grep -q "listening on" "$OUT/serve.log" && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$OUT/serve.log" | head -1)
ENVS="LANG=C.UTF-8 TERM=tmux-256color XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery"
shot() { tmux -L "$SOCK" capture-pane -p >> "$OUT/screens.txt"; }
wait_for() { for _ in $(seq 1 150); do tmux -L "$SOCK" capture-pane -p | grep -qF -- "$1" && return 0; sleep 0.1; done; return 1; }
printf 'set -g default-terminal tmux-256color\nset -g remain-on-exit on\nset -g status off\n' > "$WORK/tmux.conf"

# The browser: zones, a record, an edit committed (journal), debug pane, notifications.
tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x 120 -y 30 \
    "env $ENVS CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN='$API' CLOUDKIT_WEB_AUTH_TOKEN='$WEB' $BIN 2> $OUT/browser.err"
wait_for "3 zones" && shot
tmux -L "$SOCK" send-keys j Enter; wait_for "loaded"; shot
tmux -L "$SOCK" send-keys Enter; wait_for "FIELDS"; shot
# The record opens on its first field: j selects the second.
tmux -L "$SOCK" send-keys j e C-u "edited" Enter; wait_for "staged:"; shot
tmux -L "$SOCK" send-keys c; wait_for "POST"; shot
tmux -L "$SOCK" send-keys y; wait_for "applied"; shot
tmux -L "$SOCK" send-keys Enter D; wait_for "OPERATION"; shot
# The request inspector: URL, headers and bodies of the commit, every token redacted.
tmux -L "$SOCK" send-keys g Enter; wait_for "REQUEST HEADERS"; shot
tmux -L "$SOCK" send-keys G; sleep 0.3; shot
tmux -L "$SOCK" send-keys Escape
tmux -L "$SOCK" send-keys N; wait_for "listening"; shot
tmux -L "$SOCK" send-keys q; sleep 1
# A web auth token the server does not know: the sign-in notice and the error.
tmux -L "$SOCK" kill-server; SOCK="$SOCK-2"
tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x 120 -y 30 \
    "env $ENVS CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN='$API' CLOUDKIT_WEB_AUTH_TOKEN='$WEB-expired' $BIN 2> $OUT/browser2.err"
wait_for "Sign-in required" && shot
tmux -L "$SOCK" send-keys x D; sleep 1; shot
tmux -L "$SOCK" send-keys q; sleep 0.5
# A crash with the secrets in the environment.
env $ENVS CLOUDKIT_API_TOKEN="$API" CLOUDKIT_WEB_AUTH_TOKEN="$WEB" CKBROWSE_FAULT=crash-in-network-task script -qec "$BIN" /dev/null > "$OUT/crash.out" 2>&1 < /dev/null
# Headless commands, their errors and their help.
for args in "--help" "serve --help" "apply --help"; do "$BIN" $args > "$OUT/help-${args// /-}.txt" 2>&1; done
echo '{"zoneID":{"zoneName":"Gallery"},"operations":[{"operationType":"update","record":{"recordName":"artwork-0003","recordChangeTag":"stale","fields":{}}}]}' > "$WORK/stale.json"
env $ENVS CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN="$API" CLOUDKIT_WEB_AUTH_TOKEN="$WEB" "$BIN" apply --dry-run "$WORK/stale.json" > "$OUT/dry.txt" 2>&1
env $ENVS CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN="$API" CLOUDKIT_WEB_AUTH_TOKEN="$WEB" "$BIN" apply "$WORK/stale.json" > "$OUT/apply.txt" 2>&1
env $ENVS CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN="$API-wrong" CLOUDKIT_WEB_AUTH_TOKEN="$WEB" "$BIN" apply "$WORK/stale.json" > "$OUT/apply-wrong.txt" 2>&1
env $ENVS CLOUDKIT_DATABASE=public CLOUDKIT_KEY_ID=kid-1 CLOUDKIT_KEY_FILE="$WORK/key.pem" "$BIN" apply "$WORK/stale.json" > "$OUT/apply-s2s.txt" 2>&1
env $ENVS CLOUDKIT_DATABASE=private CLOUDKIT_KEY_ID=kid-1 CLOUDKIT_KEY_FILE="$WORK/key.pem" "$BIN" apply "$WORK/stale.json" > "$OUT/apply-s2s-private.txt" 2>&1
chmod 644 "$WORK/key.pem"
env $ENVS CLOUDKIT_DATABASE=public CLOUDKIT_KEY_ID=kid-1 CLOUDKIT_KEY_FILE="$WORK/key.pem" "$BIN" apply "$WORK/stale.json" > "$OUT/apply-s2s-open-key.txt" 2>&1
chmod 600 "$WORK/key.pem"

[ "$(grep -c . "$OUT/screens.txt")" -gt 50 ] && ok "captured $(grep -c . "$OUT/screens.txt") screen lines, $(ls "$OUT" | wc -l) output files" || bad "too little captured"
grep -q "applied 1 operation" "$OUT/screens.txt" && ok "the session really committed (journal written)" || bad "the commit did not happen"
grep -q "REQUEST HEADERS" "$OUT/screens.txt" && grep -q "ckAPIToken=<redacted>" "$OUT/screens.txt" && grep -q "ckWebAuthToken=<redacted>" "$OUT/screens.txt" \
    && ok "the request inspector really showed an exchange, its tokens redacted" || bad "the inspector was not shown"
grep -q "CONFLICT" "$OUT/apply.txt" && grep -qi "authentication\|API token" "$OUT/apply-wrong.txt" && ok "the error paths really ran" || bad "error paths: $(cat "$OUT/apply.txt" "$OUT/apply-wrong.txt" | head -c 300)"
grep -q "permissions\|readable" "$OUT/apply-s2s-open-key.txt" && ok "a group-readable key file is refused" || bad "open key file: $(head -c 200 "$OUT/apply-s2s-open-key.txt")"
# A control: the same grep finds a secret that is there.
echo "x $API y" > "$WORK/control.txt"
grep -rlaF -- "$API" "$WORK/control.txt" > /dev/null && ok "control: the grep finds a planted secret" || bad "the grep cannot find a planted secret"
for secret in "$API" "$WEB" "$KEY_CHUNK"; do
    hits=$(grep -rlaF -- "$secret" "$OUT" "$WORK/cache" "$WORK/state" "$WORK/xdg" 2>/dev/null)
    # The web auth token percent-encoded, too.
    enc=$(python3 -c "import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=''))" "$secret")
    hits="$hits$(grep -rlaF -- "$enc" "$OUT" "$WORK/cache" "$WORK/state" "$WORK/xdg" 2>/dev/null)"
    [ -z "$hits" ] && ok "no trace of secret ${secret:0:10}… anywhere" || bad "secret ${secret:0:10}… found in: $hits"
done
bad_modes=$(find "$WORK/cache" "$WORK/state" -name "*.sqlite*" -perm /077 2>/dev/null; find "$WORK/cache/ckbrowse" "$WORK/state/ckbrowse" -maxdepth 0 -perm /077 2>/dev/null)
files=$(find "$WORK/cache" "$WORK/state" -name "*.sqlite" | wc -l)
[ "$files" -ge 2 ] && [ -z "$bad_modes" ] && ok "$files cache/journal databases and their directories are owner-only" || bad "modes: files=$files, open: $bad_modes"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
