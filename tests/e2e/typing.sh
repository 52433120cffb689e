#!/usr/bin/env bash
# End-to-end: typing as a new user does, in tmux against `ckbrowse serve`. Keys sent in one burst act
# on the state the earlier keys produced; Home, End, Delete and arrows edit the text under every TERM
# (inside tmux, xterm-256color's terminfo does not list tmux's own sequences); readline keys on the
# command line. Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=typing
source tests/e2e/lib.sh

start_demo_serve
# A zone of 199 notes, f-001 … f-199.
curl -s -X POST "$DB/zones/modify?$API" -d '{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Burst"}}}]}' > /dev/null
python3 - "$DB/records/modify?$API" <<'PY'
import json, sys, urllib.request
ops = [{"operationType": "create", "record": {"recordName": f"f-{i:03d}", "recordType": "Note",
        "fields": {"text": {"value": f"note {i}"}}}} for i in range(1, 200)]
for chunk in (ops[:100], ops[100:]):
    body = json.dumps({"zoneID": {"zoneName": "Burst"}, "operations": chunk}).encode()
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=body, method="POST")).read()
PY

run() {  # TERM-inside-tmux
    new_session "$WORK/tmux.conf" "env LANG=C.UTF-8 TERM=$1 HOME=$WORK/home-$1 CLOUDKIT_SERVER=$URL \
      CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token \
      CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token $BIN"
    wait_for "4 zones" 60 || bad "$1: the browser did not start"
}
# open_burst: select the Burst zone (wherever the server lists it) and open it.
open_burst() {
    wait_for "Burst" 10 >/dev/null
    local n
    n=$(screen | sed -n '3,$p' | grep -n "^ *[^ ]" | grep -m1 " Burst " | cut -d: -f1)
    keys g
    for _ in $(seq 2 "${n:-1}"); do keys j; done
    keys Enter
    wait_for "199 loaded" 20 >/dev/null
}

# 1. A burst: /f-150 Enter d in one send-keys, six times; each stages f-150 and nothing else.
run tmux-256color
keys j  # a key typed before the zones arrive waits for them
open_burst
check "the Burst zone" "199 loaded"
for round in 1 2 3 4 5 6; do
    keys / f-150 Enter d
    if wait_for "staged: delete 'f-150'" 10; then ok "burst $round stages the delete of f-150"; else bad "burst $round"; fi
    if screen | grep -q "f-001"; then bad "burst $round: f-001 shown as the match"; fi
    keys u Escape
    wait_for "unstaged 'f-150'" 5 >/dev/null || bad "burst $round: unstage"
done
keys b
check "only f-150 was ever staged, and it is unstaged" "Nothing staged"
keys q

# 2. Home, End, Delete, arrows and Alt-b in the : line under each TERM; Home never cancels.
for term in xterm-256color tmux-256color screen linux; do
    run "$term"
    keys :
    keys -l "open f-150x"
    keys Home
    keys -l "#"
    keys End BSpace Left Left Delete
    # "#open f-150x" → End, BSpace: "#open f-150" → Left Left Delete: "#open f-1▏0" (the cursor before the 0)
    check_caret "$term: Home, End, arrows and Delete edit the line" ":#open f-1▏0" 5
    keys Escape q
done
# The staging e2e edits values; here: Home inside the inline editor keeps the typed text.
run xterm-256color
open_burst
keys Enter
check "f-001 opens" "recordName                           f-001"
keys e C-u
keys -l "abc"
keys Home
keys -l "X"
keys End
keys -l "Y"
check_caret "Home in the inline editor moves, the text stays (xterm-256color in tmux)" "XabcY▏"
keys Enter
check "the edit stages" "staged: 'text' of 'f-001'"
keys q

# 3. A new record: n, its type and name, a field, committed as a create; the server has it.
run tmux-256color
open_burst
keys n
check "n asks for the new record's type (those seen here first)" "new record (TYPE [NAME]; here: Note"
keys -l "Note fresh-1"
keys Enter
check "the new record opens" "staged: a new Note 'fresh-1'"
keys a
keys -l "text STRING"
keys Enter
keys -l "written in tmux"
keys Enter
check "its field is staged" "staged: 'text' of 'fresh-1'"
keys c
check "the preview sends a create" '"operationType": "create"'
keys y
check "committed" "applied 1 operation"
out=$(curl -s -X POST "$DB/records/lookup?$API" -d '{"zoneID":{"zoneName":"Burst"},"records":[{"recordName":"fresh-1"}]}')
grep -q '"written in tmux"' <<< "$out" && ok "the server has fresh-1 with its field" || bad "fresh-1 on the server: $out"
keys Escape
check "the list shows it" "200 loaded"
keys q

# 5. The terminal's cursor is the caret, and shown: a : line longer than the screen scrolls to keep it
# in view (at 80×24 and 100×30); off the line, the cursor stands on the selected row.
for size in 80x24 100x30; do
    run xterm-256color
    tmux -L "$SOCK" resize-window -x "${size%x*}" -y "${size#*x}"
    open_burst
    # (f-001 was edited above: its row starts with the staged mark, the cursor on it.)
    check_caret "$size: the cursor stands on the selected row" "▏M f-001" 5
    keys :
    keys -l "query Note $(for i in $(seq 1 30); do printf 'word%02d ' "$i"; done)end"
    check_caret "$size: a long : line scrolls, the caret after the last word typed" "word30 end▏"
    if screen | grep -q "^…"; then ok "$size: what scrolled off the left is marked"; else bad "$size: no … at the left of the scrolled line"; fi
    keys Home
    check_caret "$size: Home shows the start again" ":▏query Note word01"
    keys Escape q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
