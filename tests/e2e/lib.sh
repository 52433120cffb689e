# Shared by the tmux end-to-end scripts: source it after setting E2E_NAME (a socket prefix).
# Defines BIN, WORK, a tmux.conf, pass/fail counters, cleanup (tmux servers, SERVER_PID, WORK) and
# helpers that wait on screen conditions, never on fixed sleeps.
BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
[ -x "$BIN" ] || swift build --product ckbrowse >/dev/null
WORK=$(mktemp -d)
SOCK_BASE="ckb-$E2E_NAME-$$"
SOCK="$SOCK_BASE-0"
SESSIONS=0
passed=0; failed=0
cleanup() {
    for i in $(seq 0 "$SESSIONS"); do tmux -L "$SOCK_BASE-$i" kill-server 2>/dev/null; done
    # After a failure, what the server said (a crash's message and backtrace are there); lines that
    # name a token are left out, even the demo's.
    if [ "$failed" -gt 0 ] && [ -f "$WORK/serve.log" ]; then
        echo "----- serve.log (last 40 lines) -----"
        grep -vi "token" "$WORK/serve.log" | tail -40 | sed 's/^/  | /'
        [ -n "${SERVER_PID:-}" ] && ! kill -0 "$SERVER_PID" 2>/dev/null && echo "  (the server had exited)"
    fi
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
cat > "$WORK/tmux.conf" <<CONF
set -g default-terminal tmux-256color
set -g remain-on-exit on
set -g status off
CONF

# new_session CONF COMMAND: a fresh tmux server on its own socket (reusing a socket right after
# kill-server races: the new server sometimes dies at once).
new_session() {
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1))
    SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$1" new-session -d -x 100 -y 30 "$2"
}
ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; echo "----- screen -----"; tmux -L "$SOCK" capture-pane -p 2>/dev/null | sed 's/^/  | /'; echo "------------------"; }
screen() { tmux -L "$SOCK" capture-pane -p 2>/dev/null; }
# wait_for "text" [seconds] : poll the screen until it contains text
wait_for() {
    local deadline=$((SECONDS + ${2:-15}))
    while [ $SECONDS -lt $deadline ]; do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
# wait_gone "text" [seconds] : poll the screen until it no longer contains text
wait_gone() {
    local deadline=$((SECONDS + ${2:-15}))
    while [ $SECONDS -lt $deadline ]; do
        screen | grep -qF -- "$1" || return 0
        sleep 0.1
    done
    return 1
}
check() { if wait_for "$2" "${3:-15}"; then ok "$1"; else bad "$1 (waited for: $2)"; fi; }
# check_joined NAME "text" [seconds]: as check, on the screen's rows joined by single spaces (for a
# sentence the browser wraps, wherever its words fall).
check_joined() {
    local deadline=$((SECONDS + ${3:-15}))
    while [ $SECONDS -lt $deadline ]; do
        screen | python3 -c 'import sys; print(" ".join(l.strip() for l in sys.stdin.read().split("\n")))' | grep -qF -- "$2" && { ok "$1"; return 0; }
        sleep 0.1
    done
    bad "$1 (waited for, rows joined: $2)"
}
# screen_caret: the screen with ▏ put where the terminal's cursor stands (only when it is shown):
# the browser draws no caret glyph of its own, the terminal's cursor is the caret.
screen_caret() {
    local at
    at=$(tmux -L "$SOCK" display -p '#{cursor_flag} #{cursor_x} #{cursor_y}' 2>/dev/null)
    screen | python3 -c '
import sys, unicodedata
flag, x, y = (sys.argv[1].split() + ["0", "0", "0"])[:3]
for i, line in enumerate(sys.stdin.read().split("\n")):
    if flag == "1" and i == int(y):
        col, cut = 0, len(line)
        for j, ch in enumerate(line):
            if col >= int(x): cut = j; break
            col += 2 if unicodedata.east_asian_width(ch) in "WF" else (0 if unicodedata.combining(ch) else 1)
        line = line[:cut].ljust(cut + max(0, int(x) - col)) + "\u258f" + line[cut:]
    print(line)' "$at"
}
# check_caret NAME "text▏" [seconds]: as check, on screen_caret (▏ is where the cursor must stand).
check_caret() {
    local deadline=$((SECONDS + ${3:-15}))
    while [ $SECONDS -lt $deadline ]; do
        screen_caret | grep -qF -- "$2" && { ok "$1"; return 0; }
        sleep 0.1
    done
    bad "$1 (waited for: $2, ▏ the cursor)"; screen_caret | grep -F "▏" | sed 's/^/  cursor row: /'
}
keys() { tmux -L "$SOCK" send-keys "$@"; }

# start_demo_serve: `ckbrowse serve --seed demo` on a free loopback port. Sets SERVER_PID (stopped by
# cleanup), URL, API (the demo's tokens as a query string) and DB (the demo container's private database).
start_demo_serve() {
    # The log of an earlier server goes first: the new one's shell may not have truncated it yet when
    # the loop below reads it, and its "listening on" would send the tests to the dead server's port
    # (seen in CI, under the release build's load: a whole size of sharing.sh failed that way).
    rm -f "$WORK/serve.log"
    "$BIN" serve --data "$WORK/data" --port 0 --seed demo > "$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 300); do grep -qs "listening on" "$WORK/serve.log" && break; sleep 0.1; done
    URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/serve.log" | head -1)
    [ -n "$URL" ] || { echo "server did not start"; cat "$WORK/serve.log"; echo "0 passed, 1 failed"; exit 1; }
    API="ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token"
    DB="$URL/database/1/iCloud.com.example.Gallery/development/private"
}

# restart_demo_serve: stop the server of an earlier size and start a fresh one on empty data.
restart_demo_serve() {
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK/data"
    start_demo_serve
}
# demo_env SIZE: the environment that points the browser at start_demo_serve's server as user demo.
demo_env() {
    echo "LANG=C.UTF-8 TERM=xterm-256color HOME=$WORK/home-$1 CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery \
CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token"
}
