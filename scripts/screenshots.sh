#!/usr/bin/env bash
# Makes screenshots/*.png from real tmux runs of the demo browser (colours kept).
# Installs what it needs: Pillow and wcwidth from PyPI, Noto CJK from Debian (for CJK glyphs).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import PIL, wcwidth" 2>/dev/null || pip install -q pillow wcwidth
if command -v apt-get >/dev/null && ! dpkg-query -W -f='${Status}' fonts-noto-cjk 2>/dev/null | grep -q "ok installed"; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get install -y -qq fonts-noto-cjk >/dev/null || echo "warning: no CJK font; CJK glyphs will be boxes" >&2
fi
swift build --product ckbrowse >/dev/null
BIN=$(swift build --show-bin-path)/ckbrowse
WORK=$(mktemp -d); SOCK="ckb-shots-$$"; BASE=$SOCK
# Each step may fail harmlessly (a tmux server already gone when its browser quit): under `set -e` a
# failing step would end the trap there, exit 1 after every shot was written, and leave the server
# running and $WORK behind.
cleanup() {
    for socket in "$BASE" "$BASE-2" "$BASE-2-3"; do tmux -L "$socket" kill-server 2>/dev/null || true; done
    if [ -n "${SERVER_PID:-}" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p screenshots
COLS=100; ROWS=30
tmux -L "$SOCK" -f /dev/null new-session -d -x $COLS -y $ROWS \
    "env LANG=C.UTF-8 TERM=tmux-256color TZ=UTC XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache $BIN"
wait_for() { for _ in $(seq 1 600); do tmux -L "$SOCK" capture-pane -p | grep -qF -- "$1" && return 0; sleep 0.1; done; echo "timeout waiting for $1" >&2; exit 1; }
shot() { sleep 0.3; tmux -L "$SOCK" capture-pane -e -p > "$WORK/$1.ans"; python3 scripts/render_ansi.py "$WORK/$1.ans" "screenshots/$1.png" $COLS $ROWS; echo "screenshots/$1.png"; }
keys() { tmux -L "$SOCK" send-keys "$@"; }
wait_for "3 zones"; shot zones
keys j j Enter; wait_for "00 loaded"; keys j j j j j; shot records
keys : "open artwork-0017" Enter; wait_for "FIELDS"; keys j; shot record-detail
keys Enter; wait_for "artist-lee-ufan"; shot reference-followed
keys Escape Escape Escape s; wait_for "artwork-changes"; shot subscriptions
keys j Enter; wait_for "alertLocalizationKey"; shot subscription-detail
keys Escape "?"; wait_for "Keys"; shot help
keys x D; wait_for "records/changes"; shot debug
keys Enter; wait_for "REQUEST HEADERS"; keys / syncToken Enter; shot request-inspector
keys Escape Escape Escape z j j Enter; wait_for "CITY"; keys : "columns title,year" Enter; wait_for "YEAR"
keys : "sort year desc" Enter; wait_for "YEAR ↓"; shot columns
keys : "query Sculpture" Enter; wait_for "CloudKit will refuse"; keys y; sleep 0.5; keys "!"; wait_for "newest first"; shot errors
keys q

# Staged edits and a conflict: against `ckbrowse serve`, with curl as the other writer.
"$BIN" serve --data "$WORK/data" --port 0 --seed demo > "$WORK/serve.log" 2>&1 & SERVER_PID=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/serve.log" && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/serve.log" | head -1)
SOCK="$SOCK-2"
tmux -L "$SOCK" -f /dev/null new-session -d -x $COLS -y $ROWS \
    "env LANG=C.UTF-8 TERM=tmux-256color TZ=UTC XDG_CACHE_HOME=$WORK/cache2 XDG_STATE_HOME=$WORK/state CLOUDKIT_SERVER=$URL \
     CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token \
     CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token EDITOR=$WORK/show-editor $BIN"
# The "editor" shows the top and bottom of the file it is given, then saves it as it is (when told).
cat > "$WORK/show-editor" <<SH
#!/bin/sh
clear; head -n 4 "\$1"; echo "//   … (every key, the type's fields and indexes, the zones)"; grep -v '^//' "\$1" | head -n 24
while [ ! -f $WORK/editor-done ]; do sleep 0.1; done; rm -f $WORK/editor-done
touch "\$1"  # saved as it is (an editor quit without saving stages nothing)
SH
chmod +x "$WORK/show-editor"
wait_for "3 zones"
keys j Enter; wait_for "25 loaded"; keys Enter; wait_for "FIELDS 2"
keys j e C-u "Spring show: final list" Enter; wait_for "staged:"
keys k e C-u 1 Enter; wait_for "staged: 'pinned'"
keys j e; shot inline-editor
keys Escape Escape j d j Enter; wait_for "recordName                           draft-2"
keys j e C-u "Summer ideas" Enter; wait_for "staged:"; shot staged-detail
keys b; wait_for "3 record operations"; shot batch
curl -s -X POST "$URL/database/1/iCloud.com.example.Gallery/development/private/records/modify?ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token" \
    -d '{"zoneID":{"zoneName":"Drafts"},"operations":[{"operationType":"forceUpdate","record":{"recordName":"draft-0","fields":{"text":{"value":"Spring show: list v2 (from the iPad)","type":"STRING"},"pinned":{"value":0,"type":"INT64"}}}}]}' > /dev/null
keys c; wait_for "POST /database"; shot commit-preview
keys y; wait_for "SERVER NOW"; shot conflict
keys a N; wait_for "● listening"
curl -s -X POST "$URL/database/1/iCloud.com.example.Gallery/development/private/records/modify?ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token" \
    -d '{"zoneID":{"zoneName":"Gallery"},"atomic":false,"operations":[{"operationType":"forceUpdate","record":{"recordName":"artwork-0001","fields":{"title":{"value":"The Great Wave (restored)","type":"STRING"}}}},{"operationType":"create","record":{"recordName":"exhibition-spring","recordType":"Exhibition","fields":{"title":{"value":"Spring show","type":"STRING"},"rating":{"value":4.7,"type":"DOUBLE"}}}}]}' > /dev/null
wait_for "exhibition-spring"; shot notifications
keys Enter; wait_for "KEYS, NAMED"; shot push; keys Escape
# A subscription written from the template, staged with a record edit: the preview names what fires.
keys Escape s; wait_for "SUBSCRIPTION ID"; keys n C-u "query Exhibition" Enter; wait_for '"firesOn"'; shot subscription-editor
touch "$WORK/editor-done"; wait_for "staged new subscription"
keys z; wait_for "SYNC TOKEN"; keys / Gal Enter; wait_for "1 of 3 zones"; keys Enter; wait_for "RECORD NAME"; keys : "open artwork-0001" Enter; wait_for "FIELDS"; keys / title Enter e C-u "The Great Wave" Enter; wait_for "staged:"
keys c; wait_for "this commit fires"; shot commit-fires; keys Escape
# Sharing: the owner's shares and one share's view (an invitation staged), then the guest's shared database.
keys Escape : shares Enter; wait_for "the whole zone"; shot shares
keys Enter; wait_for "participants"; keys i; keys -l "ana@example.com READ_WRITE"; keys Enter; wait_for "to invite"; shot share-view
keys U Escape Escape
# The schema screen, Tab offering the comparators year's indexes allow.
keys : schema Enter; wait_for "from the server"; keys / year Enter; keys : "query Artwork year " Tab; wait_for "GREATER_THAN"; shot schema
keys C-u Escape q
SOCK="$SOCK-3"
tmux -L "$SOCK" -f /dev/null new-session -d -x $COLS -y $ROWS \
    "env LANG=C.UTF-8 TERM=tmux-256color TZ=UTC XDG_CACHE_HOME=$WORK/cache3 XDG_STATE_HOME=$WORK/state3 CLOUDKIT_SERVER=$URL \
     CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=shared CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token \
     CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-guest-token $BIN"
wait_for "demo <demo@example.com>"
keys : "accept $(grep -o "http://[^ ]*/share/[A-Za-z0-9]*" "$WORK/serve.log" | tail -1)" Enter; wait_for "2 zones"; shot shared-zones
keys q || true
