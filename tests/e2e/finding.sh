#!/usr/bin/env bash
# End-to-end: finding and reading as a new user does, in the demo browser in tmux, at 80x24 and
# 100x30: / by field value and on the zones screen, columns and sort, G to the last record, the
# request inspector, the recent errors, a help taller than the screen. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=finding
source tests/e2e/lib.sh

for size in 80x24 100x30; do
    W=${size%x*}; H=${size#*x}
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" \
        "env LANG=C.UTF-8 TERM=xterm-256color HOME=$WORK/home-$size $BIN"
    check "$size: the demo starts" "3 zones" 60
    # / on the zones screen.
    keys / Gal
    check "$size: / filters the zones" "1 of 3 zones"
    keys Enter Enter
    check "$size: the match opens" "Gallery ·"
    # A field value, not a name: the title of artwork-0001 is "Great Wave No. 1" or the like.
    keys / "wave no. 1" Enter
    check "$size: / finds records by a field value" "matches"
    screen | grep -q "artwork-0001 " && ok "$size: artwork-0001 matches by its title" || bad "$size: artwork-0001 not among the matches"
    keys Escape
    wait_gone "matches" 10 >/dev/null
    # G: to the end of the zone, the last record selected (drawn in reverse video).
    keys G
    check "$size: G loads to the end" "2,061" 30
    # The last record of the feed (exhibition-1, whose share link was its last change) in reverse video.
    # The count can show before the last window is drawn with the selection: wait for it (up to 10 s).
    sel=0
    for _ in $(seq 1 100); do
        sel=$(tmux -L "$SOCK" capture-pane -p -e | grep -E $'\e\\[([0-9]+;)*7m' | grep -c "exhibition-1 " || true)
        [ "$sel" -ge 1 ] && break
        sleep 0.1
    done
    [ "$sel" -ge 1 ] && ok "$size: the last record is selected after G" || bad "$size: no selected row after G"
    keys g
    # Columns and sort.
    keys : "columns title,year" Enter
    check "$size: :columns shows the fields" "YEAR"
    keys : "sort year desc" Enter
    check "$size: :sort orders the loaded rows" "YEAR ↓"
    # The request inspector: the whole exchange, tokens redacted.
    keys D
    check "$size: the debug pane lists the requests" "OPERATION"
    keys Enter
    check "$size: Enter opens the exchange" "REQUEST HEADERS"
    check "$size: the query's tokens are redacted" "<redacted>"
    keys Escape Escape
    # The recent errors in full.
    # The schema knows there is no such type: the query is questioned first; y sends it anyway.
    keys : "query Sculpture" Enter
    check "$size: a query of an unknown type is questioned before it is sent" "CloudKit will refuse this query: Did not find record type: Sculpture"
    keys y
    sleep 0.5
    keys !
    check "$size: ! lists the error in full" "reason: Did not find record type: Sculpture"
    check "$size: with the request's uuid" "request uuid:"
    keys !
    # A help taller than the screen scrolls.
    keys Escape z j j Enter
    wait_for "loaded" 10 >/dev/null
    keys Enter
    wait_for "FIELDS" 10 >/dev/null
    keys "?"
    if [ "$H" -le 24 ]; then
        check "$size: the help says it scrolls" "scroll for more"
        keys PageDown PageDown
        check "$size: to its end" "the end"
    else
        check "$size: the help opens" "Keys"
    fi
    keys x q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
