#!/usr/bin/env bash
# End-to-end: marks and bulk edits (issue 32), in the real browser (tmux) at 80x24 and 100x30 against
# `ckbrowse serve --seed demo` on loopback: Space marks and moves on, V marks a range, * marks what the
# filter shows, Esc unmarks; d on an artist whose DELETE_SELF cascade takes artworks with it needs the
# cascade's count typed; d on 450 marked records goes out as 3 atomic requests once 450 is typed;
# :set on 30 marked records; :export of a filtered list to .jsonl and .csv, read back with python;
# in a fresh browser, a record's "referenced by" (Enter opens one) and a cascade counted by the server
# (the zone only partly cached), the server then holding exactly what the count said.
# The server's state is read back with curl. Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=bulk
source tests/e2e/lib.sh

post() { curl -s -X POST "$DB/$1?$API" -d "$2"; }
# count: the records of Gallery on the server (its change feed, page after page).
count() {
    python3 - "$DB" "$API" <<'PY'
import json, sys, urllib.request
db, api = sys.argv[1], sys.argv[2]
token, total = None, 0
while True:
    body = {"zones": [{"zoneID": {"zoneName": "Gallery"}, **({"syncToken": token} if token else {})}]}
    req = urllib.request.Request(f"{db}/changes/zone?{api}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    zone = json.load(urllib.request.urlopen(req))["zones"][0]
    total += sum(1 for r in zone.get("records", []) if not r.get("deleted"))
    token = zone["syncToken"]
    if not zone.get("moreComing"):
        break
print(total)
PY
}
# with_year Y: how many Artworks of Gallery have year Y on the server.
with_year() {
    post records/query "{\"zoneID\":{\"zoneName\":\"Gallery\"},\"resultsLimit\":200,\"query\":{\"recordType\":\"Artwork\",\"filterBy\":[{\"fieldName\":\"year\",\"comparator\":\"EQUALS\",\"fieldValue\":{\"value\":$1,\"type\":\"INT64\"}}]}}" \
        | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["records"]))'
}
open_zone() { keys z Escape; keys / "$1" Enter; wait_for "1 of" 10 >/dev/null; keys Enter; wait_for "$1 ·" 20 || bad "$1 did not open"; }

declare -A ARTIST=([80]=artist-hokusai [100]=artist-mei-chen)
for size in ${E2E_SIZES:-80x24 100x30}; do
    W=${size%x*}; H=${size#*x}; A=${ARTIST[$W]}
    restart_demo_serve
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" "env $(demo_env "$size") $BIN"
    check "$size: the browser starts" "3 zones" 60
    open_zone Gallery
    # Everything loaded, so the cascade and * know every record.
    keys G
    check "$size: the whole zone loads" "loading to the end" 60
    wait_gone "loading to the end" 120 || bad "$size: the zone did not load to its end"
    keys g

    # 1. Marks: Space marks and moves on, V a range, Esc unmarks.
    keys Space Space
    check "$size: Space marks and moves on" "2 marked"
    [ "$(screen | grep -c '^ \*')" -ge 2 ] && ok "$size: marked rows show * in the gutter" || bad "$size: no * in the gutter"
    keys j j j V
    check "$size: V marks from the last mark (row 2) to the selection (row 6)" "6 marked"
    keys Escape
    check "$size: Esc unmarks all" "unmarked 6 records"
    keys / "wave no. 1" Enter
    keys '*'
    check "$size: * marks every loaded record the filter shows" "marked"
    wait_for "more record" 10 >/dev/null
    matches=$(screen | grep -o 'marked [0-9,]* more record' | head -1 | grep -o '[0-9]*')
    rows=$(screen | grep -c 'Wave No. 1')
    [ -n "$matches" ] && [ "$matches" -ge "$rows" ] && [ "$rows" -gt 5 ] && screen | grep -q "$matches marked" \
        && ok "$size: * marked all $matches matches" || bad "$size: * did not mark the matches ($matches)"

    # 2. :export of the filtered list: with marks (CSV), and without (JSON lines).
    keys : "export $WORK/marked-$W.csv" Enter
    check "$size: :export writes the marked records as CSV" "exported $matches records"
    python3 - "$WORK/marked-$W.csv" "$matches" <<'PY' && ok "$size: the CSV reads back ($matches rows, header, titles)" || bad "$size: the CSV does not read back"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == int(sys.argv[2]), len(rows)
assert all("Wave No. 1" in r["title"] for r in rows), rows[0]
assert all(r["recordType"] == "Artwork" and r["recordName"].startswith("artwork-") for r in rows)
PY
    keys Escape
    check "$size: Esc unmarks" "unmarked"
    keys : "export $WORK/nowhere/out.jsonl" Enter
    check "$size: an unwritable path is refused with the reason" "does not exist"
    keys C-u "export $WORK/shown-$W.jsonl" Enter
    check "$size: :export with no marks writes what the filter shows" "exported $matches records"
    python3 - "$WORK/shown-$W.jsonl" "$matches" <<'PY' && ok "$size: the JSON lines read back" || bad "$size: the JSON lines do not read back"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == int(sys.argv[2]), len(rows)
assert all("Wave No. 1" in r["fields"]["title"]["value"] and r["recordChangeTag"] for r in rows)
PY
    keys Escape
    wait_gone "/wave" 5 >/dev/null
    keys Escape

    # 3. A cascade needs its count typed.
    before=$(count)
    keys : "open $A" Enter
    check "$size: the artist opens" "recordName" 20
    keys d
    check "$size: d says what the delete takes with it" "also deletes" 20
    keys c
    check "$size: the preview asks for the cascade's count" "the cascade also deletes" 20
    n=$(screen | grep -o 'Type [0-9]* to send' | head -1 | grep -o '[0-9]*')
    keys y
    # y waits while the server still counts, then asks for the count (it never sends a cascade alone).
    check "$size: y alone does not send a cascade ($n)" "type $n to send" 30
    keys "$n" Enter
    check "$size: the count typed sends it" "applied" 30
    after=$(count)
    [ "$((before - after))" = "$((n + 1))" ] && ok "$size: the server lost exactly $n + 1 records, as the warning said" \
        || bad "$size: the server went from $before to $after records, the warning said $n + 1"
    keys Escape Escape Escape
    open_zone Gallery
    # A query lists what the server holds now (no rows of deleted records), loaded to its end.
    keys : "query Artwork" Enter
    check "$size: the query runs" "query Artwork" 20
    keys G
    wait_for "loading to the end" 10 >/dev/null
    wait_gone "loading to the end" 120 || bad "$size: the query did not load to its end"
    keys g

    # 4. d on 450 marked records: 3 atomic requests, the count typed.
    before=$(count)
    keys Space
    keys -N 448 j
    keys V
    check "$size: V marks 450" "450 marked" 20
    keys d
    check "$size: d stages the 450 deletions" "staged the deletion of 450 records" 30
    keys c
    check "$size: the preview says 3 atomic requests" "go out as 3 atomic requests" 30
    check "$size: and asks for the count" "Type 450 to send" 10
    keys y
    sleep 0.5
    [ "$(count)" = "$before" ] && ok "$size: y alone sends nothing" || bad "$size: y sent the batch"
    keys 450 Enter
    check "$size: the count typed sends it" "applied" 60
    wait_for "50 operations atomically" 30 >/dev/null
    [ "$(screen | grep -c 'zone Gallery: applied all 200 operations atomically')" = 2 ] && screen | grep -q 'zone Gallery: applied 50 operations atomically\|zone Gallery: applied all 50 operations atomically' \
        && ok "$size: 3 atomic requests applied (200, 200, 50)" || bad "$size: not 3 atomic requests of 200, 200, 50"
    [ "$(count)" = "$((before - 450))" ] && ok "$size: the server holds 450 fewer records" || bad "$size: the server went from $before to $(count)"
    keys Escape

    # 5. :set on 30 marked records.
    # A filter on a title: rows of live records only (a deleted row has no fields to match).
    keys / "Water Lilies" Enter
    keys g Space
    keys -N 28 j
    keys V
    check "$size: 30 marked" "30 marked"
    keys : "set year twenty" Enter
    check "$size: a value that is not an INT64 is refused, nothing staged" "nothing staged" 20
    keys C-u "set year 2025" Enter
    check "$size: :set stages the change on 30 records" "staged year = 2025 on 30 records" 20
    keys c
    check "$size: the preview" "30 operations" 20
    keys y
    check "$size: committed" "applied" 30
    [ "$(with_year 2025)" = 30 ] && ok "$size: the server holds year 2025 on 30 records" || bad "$size: the server holds year 2025 on $(with_year 2025) records"
    keys Escape q

    # 6. A record's "referenced by", and a cascade counted by the server: a fresh browser (its own
    #    cache) holds the zone's first pages only, so the cache alone would count too few.
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" "env $(demo_env "$size-fresh") $BIN"
    check "$size: a fresh browser starts" "3 zones" 60
    open_zone Gallery
    wait_for "artwork-0" 30 >/dev/null || bad "$size: the zone's first rows did not come"
    keys : "open artist-claude-monet" Enter
    check "$size: the artist opens" "recordName" 20
    # j down the view until the first group of referrers shows.
    for _ in $(seq 1 60); do
        screen | grep -qE '→ (DELETE_SELF|NONE|VALIDATE) \([0-9,]+\)' && break
        keys j; sleep 0.1
    done
    check "$size: the record's view lists what refers to it" "REFERENCED BY" 10
    cached=$(screen | grep -o 'REFERENCED BY [0-9,]* record' | grep -o '[0-9,]*' | tr -d ,)
    check "$size: grouped by type and field with the action" "Artwork.artist → DELETE_SELF" 5
    check "$size: and says only the cached part of the zone was looked at" "only the cached part" 5
    # G selects the last line of the view: the last referrer, on the bottom row.
    keys G
    sleep 0.3
    ref=$(screen | grep -E '(DELETE_SELF|NONE|VALIDATE) +artwork-[0-9]+' | tail -1 | grep -o 'artwork-[0-9]*')
    keys Enter
    title_has() { for _ in $(seq 1 100); do screen | head -1 | grep -q "› $1 " && return 0; sleep 0.1; done; return 1; }
    [ -n "$ref" ] && title_has "$ref" && ok "$size: Enter opens the referring record ($ref)" || bad "$size: Enter did not open '$ref'"
    keys Escape
    title_has artist-claude-monet && screen | grep -q "$ref" && ok "$size: Esc returns to the artist, where it was (its referrer $ref on screen)" \
        || bad "$size: Esc did not return to the artist's referrers"
    before=$(count)
    keys d
    check "$size: d says what the delete takes with it (the cache's count at once)" "also deletes" 60
    keys c
    # The server's answer replaces the cache's count when it comes.
    check "$size: the preview says the server counted" "counted by the server" 60
    check "$size: and what could not be asked" "Artwork.previousOwners not QUERYABLE: not asked" 5
    n=$(screen | grep -o 'also deletes [0-9,]* records' | head -1 | grep -o '[0-9]*')
    [ -n "$n" ] && [ -n "$cached" ] && [ "$n" -gt "$cached" ] && ok "$size: the server counted $n, more than the $cached the cache holds" \
        || bad "$size: the count ($n) is not more than the cache's ($cached)"
    check "$size: the count to type is the server's" "Type $n to send" 5
    keys "$n" Enter
    check "$size: the count typed sends it" "applied" 30
    after=$(count)
    [ "$((before - after))" = "$((n + 1))" ] && ok "$size: the server lost exactly $n + 1 records, as the server's count said" \
        || bad "$size: the server went from $before to $after records, the warning said $n + 1"
    keys Escape q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
