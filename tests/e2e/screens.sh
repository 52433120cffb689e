#!/usr/bin/env bash
# End-to-end: screens as values (issue 30), in the demo browser in tmux at 80x24 and 100x30, keys in
# bursts as a new user types them: `/` opened twice replaces the last filter; G in the subscriptions;
# a refused command or field keeps its text and says why; a file prompt completes paths with Tab and
# keeps a refused path; `:query` from the schema asks for its zone, shows itself in the title and Esc
# goes back to the schema. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=screens
source tests/e2e/lib.sh

for size in 80x24 100x30; do
    W=${size%x*}; H=${size#*x}
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    mkdir -p "$WORK/files-$size/scans"
    printf 'x' > "$WORK/files-$size/scan-1.png"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" -c "$WORK/files-$size" \
        "env LANG=C.UTF-8 TERM=xterm-256color HOME=$WORK/home-$size $BIN"
    check "$size: the demo starts" "3 zones" 60

    # / twice: the second opens with the first's text selected, and typing replaces it.
    keys / Gal Enter
    check "$size: / filters the zones" "1 of 3 zones"
    keys / Dra Enter
    check "$size: / again replaces the last filter" "Drafts"
    screen | grep -qE "^ Gallery " && bad "$size: Gallery still listed (the filter was appended to)" || ok "$size: only Drafts matches"
    keys Escape

    # A refused command keeps its text, and says why above it.
    keys : "open two names" Enter
    check "$size: a refused :open says why" ":open takes one record name (:open NAME)"
    check "$size: and keeps what was typed" ":open two names"
    keys C-u Escape

    # G in the subscriptions: the last one selected (reverse video).
    keys s
    check "$size: the subscriptions open" "SUBSCRIPTION ID"
    keys G
    sel=0
    # The last row of the list: the rows between the column header and the hint line.
    last=$(screen | sed -n "3,$((H - 2))p" | grep -E "^ [A-Za-z0-9]" | tail -1 | awk '{print $1}')
    for _ in $(seq 1 50); do
        sel=$(tmux -L "$SOCK" capture-pane -p -e | grep -E $'\e\\[([0-9]+;)*7m' | grep -c -- "$last" || true)
        [ "$sel" -ge 1 ] && break
        sleep 0.1
    done
    [ -n "$last" ] && [ "$sel" -ge 1 ] && ok "$size: G selects the last subscription ($last)" || bad "$size: G did not select the last subscription ($last)"

    # :query from the schema: which zone is asked (Tab completes it), the title shows the query, Esc
    # goes back to the schema.
    keys : schema Enter
    check "$size: the schema opens" "RECORD TYPE / FIELD"
    keys : "query Artwork year LESS_THAN 1900" Enter
    check "$size: the query asks which zone" "run the query in which zone?"
    keys Gal Tab Enter
    check "$size: the query's title names it" ":query Artwork year LESS_THAN 1900"
    check "$size: in Gallery" "Gallery ›"
    keys Escape
    check "$size: Esc goes back to the schema" "Schema ("

    # A file prompt: Tab completes a path, a refused path stays with its reason.
    keys z
    wait_for "3 zones" 10 >/dev/null
    keys / Gal Enter Enter
    wait_for "loaded" 15 >/dev/null
    keys Enter
    check "$size: a record opens" "FIELDS"
    # The first record's first field is a list (a would add an element): down to a plain field.
    keys j j j a "scan ASSETID" Enter
    check "$size: an asset field asks for a file" "upload a file into 'scan' on commit (PATH):"
    keys sca Tab
    check "$size: Tab lists the files that start so" "scan-1.png  scans/"
    keys -- -9.png Enter
    check "$size: a missing file is refused, and says why" "nothing staged: no file"
    check "$size: the path typed is kept" "scan-9.png"
    keys BSpace BSpace BSpace BSpace BSpace Tab
    check "$size: Tab completes the one match" "scan-1.png"
    keys Enter
    check "$size: the file is staged" "staged: upload"
    keys u q
    sleep 0.3
    keys q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
