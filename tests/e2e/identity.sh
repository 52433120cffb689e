#!/usr/bin/env bash
# End-to-end: the same container ID on two servers (the embedded demo and a `ckbrowse serve` seeded
# with the demo) keeps two caches and two journals. A delete staged in the demo never shows against
# the local server and the reverse; the status bar names the server. Also: a journal of the earlier
# layout is put to the user, never restored silently. Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=ident
source tests/e2e/lib.sh

start_demo_serve
HOSTPORT=${URL#http://}
# A record only the local server has.
curl -s -X POST "$DB/records/modify?$API" \
    -d '{"zoneID":{"zoneName":"Drafts"},"operations":[{"operationType":"create","record":{"recordName":"serve-only","recordType":"Note","fields":{"text":{"value":"x"}}}}]}' > /dev/null

# One home for both: the same XDG directories, as for a developer who uses both.
HOMEDIR="$WORK/home"
COMMON="env LANG=C.UTF-8 TERM=tmux-256color HOME=$HOMEDIR"
DEMO="$COMMON $BIN"
LOCAL="$COMMON CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private \
  CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token $BIN"
# open_drafts: from the zones list, the Drafts zone.
open_drafts() { keys g j Enter; wait_for "Drafts ·" 20 >/dev/null; }

# 1. The demo: stage the delete of draft-0, quit.
new_session "$WORK/tmux.conf" "$DEMO"
check "the demo starts" "3 zones" 60
check "the demo's status bar names its server" "local demo ›"
open_drafts
check "the demo's Drafts list (its 24 drafts and the zone's share record)" "25 loaded"
keys d
check "a delete staged in the demo" "staged: delete 'draft-0'"
check "the list marks it" "D draft-0"
keys q
wait_gone "draft-0" 10 >/dev/null

# 2. The local server with the same container ID: nothing of the demo's.
new_session "$WORK/tmux.conf" "$LOCAL"
check "the local server's browser starts" "3 zones" 60
check "its status bar names the server" "$HOSTPORT ›"
if screen | grep -q "staged"; then bad "the demo's staged delete shows against the local server"; else ok "no staged edit of the demo on the zones screen"; fi
if screen | grep "Drafts" | grep -q "cached"; then bad "the demo's cache is used for the local server"; else ok "Drafts is not cached for the local server"; fi
open_drafts
check "the local server's own records" "serve-only"
check "all 26 of them" "26 loaded"
if screen | grep -q "D draft-0"; then bad "the demo's staged delete is marked against the local server"; else ok "draft-0 is not marked for deletion here"; fi
keys b
check "the batch is empty here" "Nothing staged"
# The reverse: stage a delete of the local server's own record.
keys z
open_drafts
wait_for "serve-only" 10 >/dev/null
keys G
check "the last record" "serve-only"
keys d
check "a delete staged against the local server" "staged: delete 'serve-only'"
keys q
wait_gone "serve-only" 10 >/dev/null

# 3. Back in the demo: its own staged delete, none of the local server's.
new_session "$WORK/tmux.conf" "$DEMO"
check "the demo restores its own staged delete" "restored 1 staged operation" 60
open_drafts
check "draft-0 still marked in the demo" "D draft-0"
keys b
check "the demo's batch names its server" "on local demo"
if screen | grep -q "serve-only"; then bad "the local server's staged delete shows in the demo"; else ok "the local server's staged delete is not in the demo"; fi
keys q

# 4. A journal of the earlier layout (one file per container and environment): shown, kept on request.
STATE="$HOMEDIR/.local/state/ckbrowse"
python3 - "$STATE/journal-iCloud.com.example.Gallery-development.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE staged (position INTEGER PRIMARY KEY, operation TEXT NOT NULL)")
db.execute("CREATE TABLE inflight (position INTEGER PRIMARY KEY, database TEXT NOT NULL, body TEXT NOT NULL, sent_at INTEGER NOT NULL)")
db.execute("""INSERT INTO staged VALUES (0, '{"kind":"delete","database":"private","zoneID":{"zoneName":"Drafts"},"recordName":"draft-5","recordType":"Note","baseTag":"1","baseFields":{},"changes":{}}')""")
db.commit()
PY
new_session "$WORK/tmux.conf" "$LOCAL"
check "an earlier journal is put to the user" "Staged edits from an earlier version" 60
check "it lists what it holds" "DELETE private › Drafts › draft-5"
check "and offers to keep them for this server" "keep them for $HOSTPORT"
keys Escape
check "Esc leaves it for later" "asks again at the next start"
keys q
new_session "$WORK/tmux.conf" "$LOCAL"
check "asked again at the next start" "Staged edits from an earlier version" 60
keys k
check "k keeps them for the local server" "kept 1 staged operation for $HOSTPORT"
if [ -e "$STATE/journal-iCloud.com.example.Gallery-development.sqlite" ]; then bad "the earlier journal was not removed"; else ok "the earlier journal is removed once kept"; fi
keys b
check "the kept delete is in this server's batch" "draft-5"
keys q

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
