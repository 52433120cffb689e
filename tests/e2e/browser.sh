#!/usr/bin/env bash
# End-to-end: the real ckbrowse binary in tmux against `ckbrowse serve` on a loopback port.
# Waits on screen conditions (never fixed sleeps) and prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=e2e
source tests/e2e/lib.sh
API_SECRET="E2E-SECRET-API-$$-$RANDOM"
WEB_SECRET="E2E-SECRET-WEB-$$-$RANDOM"
# wait_width MIN MAX : the title row (right-aligned hints) ends between MIN and MAX bytes
wait_width() {
    local deadline=$((SECONDS + 15)) n
    while [ $SECONDS -lt $deadline ]; do
        n=$(screen | head -1 | awk '{ print length }')
        [ "$n" -ge "$1" ] && [ "$n" -le "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
screens_log="$WORK/screens.txt"
snap() { screen >> "$screens_log"; }

"$BIN" serve --data "$WORK/data" --port 0 --seed demo --api-token "$API_SECRET" --user "e2e:$WEB_SECRET" > "$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/serve.log" && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/serve.log" | head -1)
[ -n "$URL" ] || { echo "server did not start"; cat "$WORK/serve.log"; echo "0 passed, 1 failed"; exit 1; }
echo "server at $URL"

# The e2e user owns an empty private database; the demo user's data is reached with its own token.
new_session "$WORK/tmux.conf" \
    "env LANG=C.UTF-8 TERM=tmux-256color XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state \
     CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private \
     CLOUDKIT_API_TOKEN=$API_SECRET CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token $BIN; echo \$? > $WORK/main.code"

check "zones of the private database" "Gallery"
snap
keys j j Enter
check "open the Gallery zone: the first pages" "00 loaded · more coming"
keys G
check "G pages to the end" "2,061 loaded"
if wait_gone "more coming" 20; then ok "no more coming after the last page"; else bad "still more coming"; fi
snap
keys : "open artwork-0017" Enter
check "open a record" "FIELDS 14"
check "every list expanded" "TIMESTAMP_LIST"
keys j Enter  # the record opens on its first field; the second is the reference
check "follow a reference" "artist-lee-ufan"
check "CJK values line up" "이우환"
snap
keys v
check "raw JSON view" "RAW JSON"
keys Escape Escape Escape s
check "subscriptions" "artwork-changes"
keys j Enter
check "subscription detail" "alertLocalizationKey"
snap
keys Escape
check "back to the subscription list" "WATCHES"
tmux -L "$SOCK" resize-window -x 120 -y 40
if wait_width 115 125; then ok "resize to 120x40 re-lays out"; else bad "layout did not follow the resize to 120 columns"; fi
tmux -L "$SOCK" resize-window -x 60 -y 15
check "below 80x24 it says what it needs" "needs a terminal of at least 80×24"
tmux -L "$SOCK" resize-window -x 100 -y 30
if wait_width 95 105; then ok "back to 100x30"; else bad "layout did not follow the resize back to 100 columns"; fi
keys D
check "debug pane lists requests" "records/changes"
snap
keys D z 1
check "switch to the public database" "public · 1 zone"
keys Enter
check "the public default zone asks for a query" "has no change feed"
keys : "query Artist firstName BEGINS_WITH Me" Enter
check "query the public default zone" "artist-mei-chen"
keys q
# The exit status is written by the shell around the browser (tmux's pane_dead_status is not always
# collected in time).
for _ in $(seq 1 100); do [ -s "$WORK/main.code" ] && break; sleep 0.1; done
if [ "$(cat "$WORK/main.code" 2>/dev/null)" = "0" ]; then ok "q quits with status 0"; else bad "q did not quit cleanly (status '$(cat "$WORK/main.code" 2>/dev/null)')"; fi
if [ "$(tmux -L "$SOCK" display -p '#{alternate_on}')" = "0" ]; then ok "terminal restored (alternate screen off)"; else bad "alternate screen still on"; fi

# SIGTERM and SIGHUP restore the terminal too.
for sig in TERM HUP; do
    new_session "$WORK/tmux.conf" \
        "env LANG=C.UTF-8 TERM=tmux-256color XDG_DATA_HOME=$WORK/xdg2 XDG_CACHE_HOME=$WORK/cache-sig-$sig $BIN; echo \$? > $WORK/exit-$sig; stty -a > $WORK/stty-$sig"
    if wait_for "Gallery" 60; then
        pid=$(tmux -L "$SOCK" display -p '#{pane_pid}')
        child=$(pgrep -P "$pid" -x ckbrowse || pgrep -P "$pid" | head -1)
        kill -"$sig" "$child"
        code=$([ $sig = TERM ] && echo 143 || echo 129)
        for _ in $(seq 1 100); do [ -s "$WORK/stty-$sig" ] && break; sleep 0.1; done
        got=$(cat "$WORK/exit-$sig" 2>/dev/null)
        if [ "$got" = "$code" ] && grep -qw -- "icanon" "$WORK/stty-$sig" && ! grep -qw -- "-icanon" "$WORK/stty-$sig" \
            && grep -qw -- "echo" "$WORK/stty-$sig" && [ "$(tmux -L "$SOCK" display -p '#{alternate_on}')" = "0" ]; then
            ok "SIG$sig restores the terminal (exit $code, icanon echo, alternate screen off)"
        else bad "SIG$sig: exit '$got', tty: $(grep -o -w -e '-\?icanon' -e '-\?echo' "$WORK/stty-$sig" 2>/dev/null | tr '\n' ' ')"; fi
    else bad "demo browser did not start for SIG$sig"; fi
done

# Not a terminal: a clear error, exit 1.
msg=$("$BIN" < /dev/null 2>&1 > "$WORK/out.txt"); code=$?
if [ $code -ne 0 ] && echo "$msg" | grep -q "must be a terminal"; then ok "not a terminal: says so and exits $code"; else bad "not a terminal: exit $code, message: $msg"; fi
# --help names the token options but never a value.
help=$(CLOUDKIT_API_TOKEN="$API_SECRET" "$BIN" --help 2>&1)
if grep -qF "$API_SECRET" <<< "$help"; then bad "--help printed a token"; else ok "--help shows no token"; fi

# Other terminals: 8 colours (xterm, screen, linux) and NO_COLOR draw the same screen.
n=0
for variant in "TERM=xterm" "TERM=screen" "TERM=linux" "TERM=xterm-256color NO_COLOR=1"; do
    n=$((n + 1))
    new_session "$WORK/tmux.conf" "env LANG=C.UTF-8 $variant XDG_DATA_HOME=$WORK/xdg2 XDG_CACHE_HOME=$WORK/cache-v$n $BIN"
    if wait_for "3 zones" 60; then
        keys j j Enter
        if wait_for "00 loaded" 20; then ok "$variant: zones and records"; else bad "$variant: records"; fi
        keys q
    else bad "$variant: did not start"; fi
done

# Sign-in: a private database without a web auth token shows the sign-in URL, then continues in public.
new_session "$WORK/tmux.conf" \
    "env LANG=C.UTF-8 TERM=tmux-256color XDG_CACHE_HOME=$WORK/cache3 CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN=$API_SECRET $BIN"
check "sign-in required shows the URL" "$URL/signin"
keys x
check "then continues in the public database" "public · 1 zone"
snap

# y copies the record as JSON with OSC 52 (tmux puts it in its paste buffer).
printf 'set -g default-terminal tmux-256color\nset -g set-clipboard on\nset -g status off\nset -g remain-on-exit on\n' > "$WORK/clip.conf"
new_session "$WORK/clip.conf" "env LANG=C.UTF-8 TERM=tmux-256color XDG_DATA_HOME=$WORK/xdg2 XDG_CACHE_HOME=$WORK/cache-clip $BIN"
if wait_for "3 zones" 60; then
    keys j j Enter; wait_for "00 loaded" 20 >/dev/null; keys y
    deadline=$((SECONDS + 10)); copied=""
    while [ $SECONDS -lt $deadline ]; do copied=$(tmux -L "$SOCK" show-buffer 2>/dev/null || true); [ -n "$copied" ] && break; sleep 0.1; done
    if echo "$copied" | grep -q '"recordName": "artist-mei-chen"'; then ok "y copies the record as JSON (OSC 52)"; else bad "y did not reach the clipboard"; fi
    keys q
else bad "clipboard run did not start"; fi
tmux -L "$SOCK" kill-server 2>/dev/null

if grep -qF -e "$API_SECRET" -e "$WEB_SECRET" "$screens_log" "$WORK/serve.log"; then bad "a token appeared on screen or in the server log"; else ok "no token on any captured screen or in the server log"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
