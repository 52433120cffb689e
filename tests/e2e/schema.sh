#!/usr/bin/env bash
# End-to-end: the schema in the browser, in tmux at 80x24 and 100x30, against `ckbrowse serve
# --seed demo` on loopback: the schema screen (types, fields, indexes, grants, from the server), Tab
# completion of :query (types, fields, the comparators a field's indexes allow, shown above the line),
# a schema imported with curl that drops an index, then the question before a query CloudKit would
# refuse (any key edits it, y sends it: the server refuses with CloudKit's reason), Enter on a field
# starting a filter, and `a` in a record offering the schema's fields with their types.
# Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=schema
source tests/e2e/lib.sh

for size in ${E2E_SIZES:-80x24 100x30}; do
    W=${size%x*}; H=${size#*x}
    restart_demo_serve
    OPEN="env $(demo_env "$size") $BIN"
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" "$OPEN"
    check "$size: the browser opens" "Gallery" 60

    keys : schema Enter
    check "$size: :schema opens the schema from the server" "Schema (development · from the server)"
    check "$size: record types with their fields and indexes" "aliases"
    screen | grep -qE "^ +born +TIMESTAMP +QUERYABLE SORTABLE" && ok "$size: a field's type and indexes in columns" || bad "$size: field row"
    # The selection is visible (reverse video) on the first row.
    tmux -L "$SOCK" capture-pane -p -e | sed -n 3p | grep -qE $'\e\\[([0-9]+;)*7m' && ok "$size: the selected row is shown" || bad "$size: no visible selection"
    keys G
    check "$size: G reaches the last type's grants" "READ _world"

    # Tab completes the query from the schema.
    keys : "query Artw" Tab
    check_caret "$size: Tab completes the record type" ":query Artwork ▏"
    keys t i Tab
    check_caret "$size: Tab completes the field" ":query Artwork title ▏"
    keys Tab
    check "$size: Tab offers the comparators title's indexes allow, above the line" "CONTAINS_ALL_TOKENS"
    keys C-u Escape

    # A schema that drops year's QUERYABLE index, imported with curl through the endpoint.
    curl -s "$URL/schema/1/iCloud.com.example.Gallery/development?ckAPIToken=ckbrowse-demo-api-token" \
      | sed 's/^\(        year  *INT64\) QUERYABLE SORTABLE,$/\1 SORTABLE,/' > "$WORK/noindex.ckdb"
    answer=$(curl -s -X POST --data-binary @"$WORK/noindex.ckdb" "$URL/schema/1/iCloud.com.example.Gallery/development/import?ckAPIToken=ckbrowse-demo-api-token")
    grep -q '"changes"' <<< "$answer" && ok "$size: the schema is imported with curl" || bad "$size: import answered $answer"
    keys r
    wait_for "loading the schema" 2 > /dev/null; wait_gone "loading the schema" 10 > /dev/null
    keys : "query Artwork year " Tab
    check "$size: after the import year offers only the range comparators" "LESS_THAN  LESS_THAN_OR_EQUALS  GREATER_THAN"
    keys E Q U A L S Space 1 9 0 0 Enter
    # Typed on the schema screen: no zone is open, so which one is asked.
    check "$size: the query asks for its zone" "run the query in which zone?"
    keys Gallery Enter
    check "$size: the query is questioned before it is sent" "CloudKit will refuse this query: Field 'year' is not marked"
    keys x
    check "$size: any other key brings the line back to be fixed" ":query Artwork year EQUALS 1900"
    keys Enter Gallery Enter y
    wait_for "BAD" 15 > /dev/null
    keys '!'
    check "$size: with CloudKit's reason" "reason: Field 'year' is not marked queryable"
    keys Escape

    # Enter on a field of the schema screen starts a filter on it.
    keys : schema Enter
    wait_for "Schema (development" 10 > /dev/null
    keys / thumbnail Enter
    wait_for "thumbnail" 5 > /dev/null
    keys Enter
    check_caret "$size: / finds a field and Enter on it starts a :query filter" ":query Artwork thumbnail ▏"
    check "$size: with the comparators its indexes allow" "comparators: EQUALS NOT_EQUALS"
    keys C-u Escape Escape Escape Escape

    # In a record, a offers the schema's fields not set yet, with their types (artists are public).
    keys 1
    wait_for "· public" 10 > /dev/null
    keys Enter
    wait_for ":query" 10 > /dev/null
    keys : "query Artist" Enter
    check "$size: an unfiltered query runs (the demo indexes recordName)" "artist-hokusai" 20
    keys / hokusai Enter Enter
    check "$size: the record opens" "recordName" 15
    keys a Tab
    check "$size: a + Tab offers the schema's fields not set yet" "aliases  studio"
    keys s Tab
    check "$size: one field: Tab fills in its type from the schema" "add field (NAME TYPE): studio LOCATION"
    keys Escape
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
