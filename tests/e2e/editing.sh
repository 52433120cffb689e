#!/usr/bin/env bash
# End-to-end: editing and recovering as a new user does, in tmux at 80x24 and 100x30, against
# `ckbrowse serve` on loopback: one element of a list edited, added and removed; u unstages one
# field and U a record; a zone created (n) and one deleted (d, its name typed) in the same commit as
# the record edits; the commit screen's g, G and ?; a conflict prompt's ?, Esc asking before
# resolutions are dropped, and m / t; a LOCATION edit that keeps altitude and time (read back with
# ckbrowse get --json), a VALIDATE reference to nothing flagged before commit, the batch showing an
# added list element; a two-filter sorted :query written with Tab, recalled with ↑; d on an artist
# saying what its DELETE_SELF cascade takes with it. The server's
# state is checked with curl after each commit.
# Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=editing
source tests/e2e/lib.sh

start_demo_serve
post() { curl -s -X POST "$DB/$1?$API" -d "$2"; }
lookup() { post records/lookup "{\"zoneID\":{\"zoneName\":\"$1\"},\"records\":[{\"recordName\":\"$2\"}]}"; }
field() {  # field JSON NAME: the value of one field, as JSON
    python3 -c 'import json,sys; r=json.loads(sys.argv[1])["records"][0]; print(json.dumps(r["fields"].get(sys.argv[2],{}).get("value"), ensure_ascii=False))' "$1" "$2"
}
# open_zone NAME: from anywhere, the zones screen filtered to NAME, and the zone opened.
open_zone() { keys z Escape; keys / "$1" Enter; wait_for "1 of" 10 >/dev/null; keys Enter; wait_for "$1 ·" 20 || bad "$1 did not open"; }
open_record() { keys : "open $1" Enter; wait_for "recordName  " 10 >/dev/null; wait_for " $1" 10 || bad "could not open $1"; }

declare -A ARTIST=([80]=artist-hokusai [100]=artist-mei-chen)
for size in ${E2E_SIZES:-80x24 100x30}; do
    W=${size%x*}; H=${size#*x}; A=${ARTIST[$W]}
    # A zone the user will delete, with a record in it.
    post zones/modify "{\"operations\":[{\"operationType\":\"create\",\"zone\":{\"zoneID\":{\"zoneName\":\"Doomed-$W\"}}}]}" > /dev/null
    post records/modify "{\"zoneID\":{\"zoneName\":\"Doomed-$W\"},\"operations\":[{\"operationType\":\"create\",\"record\":{\"recordName\":\"d-1\",\"recordType\":\"Note\",\"fields\":{\"text\":{\"value\":\"x\"}}}}]}" > /dev/null
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" \
        "env LANG=C.UTF-8 TERM=xterm-256color HOME=$WORK/home-$size CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery \
         CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token $BIN"
    check "$size: the browser starts" "Doomed-$W" 60

    # 1. Zones: n creates one, d deletes one after its name is typed; both staged, shown in the list.
    keys n
    check "$size: n asks for the new zone's name" "new zone (NAME)"
    keys -l "Scratch-$W"; keys Enter
    check "$size: the new zone is listed as staged" "+ Scratch-$W"
    keys / "Doomed-$W" Enter
    wait_for "1 of" 10 >/dev/null
    keys d
    check "$size: d asks for the zone's name" "type its name"
    keys -l "Doomed-$W"; keys Enter
    check "$size: the deletion is staged" "DELETE staged"

    # 2. One element of a list: e edits it, a adds one after it, x removes one; the selection follows.
    open_zone Gallery
    open_record "$A"
    keys g j e C-u
    keys -l "Edited-$W"; keys Enter
    check "$size: e on [0] stages the list" "staged: 'aliases' of '$A'"
    check "$size: [0] is the new text" "[0] Edited-$W"
    keys a
    check "$size: a adds after the selected element" "add to aliases at [1]"
    keys -l "Added-$W"; keys Enter
    check "$size: the added element is [1]" "[1] Added-$W"
    check "$size: the list has 3 items" "[3 items]"
    keys j x
    check "$size: x removes the selected element" "staged: remove [2] of 'aliases'"
    check "$size: the list has 2 items" "[2 items]"
    check "$size: the old elements are shown" "was: ["
    # 3. Two more fields; u unstages the selected one only. j goes to the next field: the selection
    # never rests on a staged field's was: line (issue 30).
    keys j e C-u
    keys -l "City-$W"; keys Enter
    check "$size: a second field is staged" "staged: 'city' of '$A'"
    keys j e C-u
    keys -l "Name-$W"; keys Enter
    check "$size: a third field is staged" "staged: 'name' of '$A'"
    keys u
    check "$size: u unstages that field only" "unstaged 'name' of '$A' · 2 field changes of it still staged"
    # 4. U unstages a whole record.
    keys / "exhibition-1" Enter
    keys Escape
    open_record exhibition-1
    keys g e C-u
    keys -l "Renamed"; keys Enter
    check "$size: another record staged" "staged: 'name' of 'exhibition-1'"
    keys U
    check "$size: U unstages the record" "unstaged 'exhibition-1'"
    keys Escape / "$A" Enter
    check "$size: the list marks the staged record apart from its name" "M $A"
    keys Escape

    # 5. One commit: the zones first, then the records; the commit screen scrolls with g and G.
    keys c
    check "$size: the preview sends zones/modify" "zones/modify"
    keys y
    check "$size: the zone is created" "private zone Scratch-$W: created."
    check "$size: the other is deleted" "private zone Doomed-$W: deleted, with its records."
    keys G
    if wait_gone "private zone Scratch-$W: created." 5; then ok "$size: G scrolls to the end"; else bad "$size: G did not scroll"; fi
    keys g
    check "$size: g back to the top" "private zone Scratch-$W: created."
    keys "?"
    check "$size: ? lists the commit screen's keys" "quit (not while a request is in flight)"
    keys x Escape
    wait_gone "The requests that were sent" 5 >/dev/null
    out=$(lookup Gallery "$A")
    [ "$(field "$out" aliases)" = "[\"Edited-$W\", \"Added-$W\"]" ] && ok "$size: the server has the list as edited" || bad "$size: aliases on the server: $(field "$out" aliases)"
    [ "$(field "$out" city)" = "\"City-$W\"" ] && ok "$size: and the city" || bad "$size: city on the server: $(field "$out" city)"
    [ "$(field "$out" name)" != "\"Name-$W\"" ] && ok "$size: the unstaged field was not sent" || bad "$size: name was sent"
    zones=$(curl -s "$DB/zones/list?$API")
    grep -q "\"Scratch-$W\"" <<< "$zones" && ! grep -q "\"Doomed-$W\"" <<< "$zones" && ok "$size: the zones on the server" || bad "$size: zones: $zones"

    # 6. Conflicts: two drafts edited here and changed meanwhile by someone else.
    D1=draft-$((W / 10)); D2=draft-$((W / 10 + 1))
    open_zone Drafts
    for d in "$D1" "$D2"; do
        open_record "$d"
        keys g j e C-u
        keys -l "mine $d"; keys Enter
        wait_for "staged: 'text' of '$d'" 10 || bad "$size: staging $d"
        keys Escape
    done
    for d in "$D1" "$D2"; do
        post records/modify "{\"zoneID\":{\"zoneName\":\"Drafts\"},\"operations\":[{\"operationType\":\"forceUpdate\",\"record\":{\"recordName\":\"$d\",\"fields\":{\"text\":{\"value\":\"theirs $d\",\"type\":\"STRING\"}}}}]}" > /dev/null
    done
    keys c y
    check "$size: the conflict prompt" "Conflict 1 of 2"
    keys "?"
    check "$size: ? shows the prompt's keys" "keep mine, re-based on the server's change tag"
    keys x
    wait_gone "keep mine, re-based" 5 >/dev/null
    keys m
    check "$size: m resolves the first, the second is shown" "Conflict 2 of 2 (1 resolved)"
    keys Escape
    check "$size: Esc asks before the chosen resolution is dropped" "Abort the commit and drop the resolutions chosen so far?"
    keys k
    check "$size: any other key returns to the prompt" "Conflict 2 of 2 (1 resolved)"
    keys t
    check "$size: t takes the server's version; the re-based batch is previewed" "y send"
    keys y
    check "$size: committed" "applied 1 operation"
    keys Escape
    [ "$(field "$(lookup Drafts "$D1")" text)" = "\"mine $D1\"" ] && ok "$size: mine kept for $D1" || bad "$size: $D1 on the server"
    [ "$(field "$(lookup Drafts "$D2")" text)" = "\"theirs $D2\"" ] && ok "$size: the server's kept for $D2" || bad "$size: $D2 on the server"

    # 7. Every value kept (issue 32): a LOCATION edit keeps altitude and time; a VALIDATE reference to
    # nothing is flagged before commit; the batch shows an added list element.
    L=$(printf "artwork-%04d" $((W == 80 ? 13 : 26)))
    before=$(lookup Gallery "$L")
    open_zone Gallery
    open_record "$L"
    keys / location Enter
    wait_for "location" 5 >/dev/null
    keys e
    check "$size: the location editor offers altitude and time" "alt 35.0 at "
    keys C-e; keys -l " course 90"; keys Enter
    check "$size: the location is staged" "staged: 'location' of '$L'"
    keys Escape
    keys / artist Enter
    wait_for "artist" 5 >/dev/null
    keys e
    check "$size: the reference editor says target and action" "→ target artist-"
    keys C-u; keys -l "artist-nobody VALIDATE"
    check "$size: as typed" "→ target artist-nobody (VALIDATE): the target must exist"
    keys Enter
    check "$size: the missing target is flagged when staged" "artist-nobody does not exist: VALIDATE will refuse"
    keys Escape
    keys / tags Enter
    wait_for "tags" 5 >/dev/null
    # a on the list's own row adds a field; on its last element ([2] of three) it adds one after it.
    keys j j j a; keys -l "sale-$W"; keys Enter
    check "$size: an element is added" "staged: 'tags' of '$L'"
    keys b
    check "$size: the batch shows the added element" "sale-$W added"
    check "$size: the batch shows the reference as target (ACTION)" "→ artist-nobody (VALIDATE)"
    check "$size: the batch flags the missing target" "✗ artist → artist-nobody does not exist"
    keys c
    check "$size: the commit preview says what changes" "What changes:"
    check "$size: the preview flags the missing target before sending" "artist → artist-nobody does not exist: VALIDATE will refuse"
    keys n
    # The reference is unstaged; the rest is committed and read back with ckbrowse get --json.
    keys Escape; open_record "$L"
    keys / artist Enter
    wait_for "artist" 5 >/dev/null
    keys u
    check "$size: u unstages the reference only" "unstaged 'artist' of '$L'"
    keys c y
    check "$size: committed" "applied 1 operation"
    keys Escape
    env LANG=C.UTF-8 HOME=$WORK/home-$size CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private \
        CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token "$BIN" get "$L" --zone Gallery --json > "$WORK/get-$size.json" 2> "$WORK/get.err"
    python3 - "$WORK/get-$size.json" "$before" <<'PY' && ok "$size: ckbrowse get --json: altitude and time kept, course added" || bad "$size: the location read back: $(cat "$WORK/get-$size.json" "$WORK/get.err" | head -c 600)"
import json, sys
text = open(sys.argv[1]).read()
got = json.loads(text)
got = got[0] if isinstance(got, list) else got
got = got.get("records", [got])[0] if "records" in got else got
old = json.loads(sys.argv[2])["records"][0]["fields"]["location"]["value"]
new = got["fields"]["location"]["value"]
assert new["altitude"] == old["altitude"] == 35 and new["timestamp"] == old["timestamp"], (old, new)
assert new["course"] == 90 and new["latitude"] == old["latitude"] and new["horizontalAccuracy"] == old["horizontalAccuracy"], (old, new)
assert got["fields"]["tags"]["value"][-1].startswith("sale-"), got["fields"]["tags"]
assert got["fields"]["artist"]["value"]["recordName"] != "artist-nobody"
PY

    # 8. Queries people write: two filters and a sort, Tab for each part, ↑ recalls the line.
    keys :; keys -l "query Artwork year GREATER_THAN 1850 an"; keys Tab
    check_caret "$size: Tab completes and" "year GREATER_THAN 1850 and ▏"
    keys -l "year LESS_THAN 1860 so"; keys Tab
    check_caret "$size: Tab completes sort" "LESS_THAN 1860 sort ▏"
    keys -l "ye"; keys Tab; keys -l "d"; keys Tab
    check "$size: Tab completes the sort field and direction" "sort year desc"
    keys Enter
    first=$(post records/query '{"zoneID":{"zoneName":"Gallery"},"query":{"recordType":"Artwork","filterBy":[{"fieldName":"year","comparator":"GREATER_THAN","fieldValue":{"value":1850,"type":"INT64"}},{"fieldName":"year","comparator":"LESS_THAN","fieldValue":{"value":1860,"type":"INT64"}}],"sortBy":[{"fieldName":"year","ascending":false}]},"resultsLimit":1}' \
        | python3 -c 'import json,sys; r=json.load(sys.stdin)["records"][0]; print(r["recordName"], r["fields"]["year"]["value"])')
    check "$size: the two-filter sorted query's first record is the server's" "${first% *}"
    [ "${first#* }" = 1859 ] && ok "$size: sorted by year, descending, within both filters" || bad "$size: first record: $first"
    keys Escape :
    keys Up
    check "$size: ↑ recalls the query line" "query Artwork year GREATER_THAN 1850 and year LESS_THAN 1860 sort year desc"
    keys Escape

    # 9. Delete impact: d on an artist says what the cascade takes with it (from the cached artworks).
    open_zone Gallery
    open_record "$A"
    keys d
    check "$size: d says what the delete takes with it" "also deletes"
    keys b
    check "$size: the batch shows the cascade" "✗ deleting $A also deletes"
    check "$size: grouped by type, field and action" "Artwork (artist →"
    keys u
    check "$size: unstaged" "unstaged '$A'"
    keys Escape
    keys q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
