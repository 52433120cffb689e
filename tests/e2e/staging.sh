#!/usr/bin/env bash
# End-to-end: staged edits, commits and conflict prompts in the real browser (tmux), against
# `ckbrowse serve` on loopback; another client writes through the API with curl, and the server's
# state is checked the same way. Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=stage
source tests/e2e/lib.sh

start_demo_serve
lookup() { curl -s -X POST "$DB/records/lookup?$API" -d "{\"zoneID\":{\"zoneName\":\"Drafts\"},\"records\":[{\"recordName\":\"$1\"}]}"; }
# other_writer JSON-OPERATION: another client changes the zone meanwhile.
other_writer() { curl -s -X POST "$DB/records/modify?$API" -d "{\"zoneID\":{\"zoneName\":\"Drafts\"},\"atomic\":false,\"operations\":[$1]}" > /dev/null; }
force_text() { other_writer "{\"operationType\":\"forceUpdate\",\"record\":{\"recordName\":\"$1\",\"fields\":{\"text\":{\"value\":\"$2\",\"type\":\"STRING\"}}}}"; }

# A fake $EDITOR: the first time it breaks the JSON; the second time it checks that the error is on
# top and its broken text was kept, then fixes it and sets pinned to 77.
cat > "$WORK/editor.py" <<'PY'
import json, os, sys
path, state = sys.argv[1], os.environ["EDITOR_STATE"]
text = open(path).read()
runs = int(open(state).read()) if os.path.exists(state) else 0
open(state, "w").write(str(runs + 1))
lines = text.split("\n")
body = "\n".join(l for l in lines if not l.lstrip().startswith("//"))
if runs == 0:
    open(path, "w").write(text.replace('"INT64"', '"INT64",,', 1))
else:
    if lines[0].startswith("// ERROR") and ",," in body:
        open(state + ".kept", "w").write("yes")
    fields = json.loads(body.replace('"INT64",,', '"INT64"'))
    fields["pinned"]["value"] = 77
    open(path, "w").write(json.dumps(fields, indent=2))
PY
ENVS="env LANG=C.UTF-8 TERM=tmux-256color XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state \
  CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery CLOUDKIT_DATABASE=private \
  CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token \
  EDITOR='python3 $WORK/editor.py' EDITOR_STATE=$WORK/editor-state"
start() { new_session "$WORK/tmux.conf" "$ENVS $BIN"; wait_for "Drafts" 60 || bad "the browser did not start"; }
# open NAME: the record from the Drafts list (g to the top, then the :open command).
open_record() { keys Escape; keys : "open $1" Enter; wait_for "recordName                           $1" 10 || bad "could not open $1"; }
# edit_field N VALUE: the N-th field of the record (g selects the first), typed anew.
edit_field() { keys g; for _ in $(seq 2 "$1"); do keys j; done; keys e C-u "$2" Enter; }

start
keys j Enter
check "the Drafts zone opens (24 drafts and its share record)" "25 loaded"

# 1. Two updates and a delete, reviewed and committed as one atomic batch.
keys Enter
check "open draft-0" "Draft 0 — ideas"
edit_field 2 "Edited by e2e"
check "the inline editor stages a STRING" "staged: 'text' of 'draft-0'"
edit_field 1 "12x"
check "invalid INT64: the error in place" "INT64 needs a whole number"
keys C-u 5 Enter
check "a valid INT64 is staged" "staged: 'pinned' of 'draft-0'"
keys Escape j Enter
check "open draft-1" "recordName                           draft-1"
edit_field 1 3
keys Escape j d
check "d in the list stages a delete" "staged: delete 'draft-2'"
if screen | grep -q "^M draft-0" && screen | grep -q "^M draft-1" && screen | grep -q "^D draft-2"; then ok "the list marks modified and deleted records"; else bad "list marks"; fi
keys b
check "the batch screen lists every op" "Staged: 3 record operations in 1 zone"
check "with old → new per field" "text: Draft 0 — ideas for the spring show → Edited by e2e"
check "and the base change tag" "based on change tag"
keys c
check "c previews the exact request" "POST /database/1/iCloud.com.example.Gallery/development/private/records/modify"
check "one atomic request" "atomic: true · 3 operations"
lookup draft-0 | grep -q "Edited by e2e" && bad "the preview sent something" || ok "nothing is sent before confirming"
keys y
check "y commits: applied atomically" "applied all 3 operations atomically"
lookup draft-0 | grep -q '"Edited by e2e"' && lookup draft-0 | grep -q '"value":5' && ok "draft-0's two fields are on the server" || bad "draft-0 on the server: $(lookup draft-0)"
lookup draft-1 | grep -q '"value":3' && ok "draft-1's update is on the server" || bad "draft-1: $(lookup draft-1)"
lookup draft-2 | grep -q NOT_FOUND && ok "draft-2 is deleted on the server" || bad "draft-2: $(lookup draft-2)"
keys Enter
check "the status bar says what was committed" "committed 3 operations (2 saved, 1 deleted)"

# 2. Conflict: keep mine, re-based on the server's tag.
open_record draft-3
edit_field 2 "Mine"
force_text draft-3 "Theirs"
keys c y
check "a conflict opens the prompt" "Nothing was applied in zone Drafts"
check "three columns: base, mine, server now" "SERVER NOW"
check "the server's value is shown" "Theirs"
keys m
check "keep mine: a new preview, re-based" "keep mine, re-based on the server's tag"
keys y
check "the re-based batch is committed" "applied 1 operation atomically"
lookup draft-3 | grep -q '"Mine"' && ok "mine is on the server" || bad "draft-3: $(lookup draft-3)"
keys Enter

# 3. Take the server's; the innocent op (ATOMIC_ERROR) is committed again.
open_record draft-4
edit_field 1 9
open_record draft-5
keys d
force_text draft-4 "Changed elsewhere"
keys c y
check "the innocent op is explained" "failed only with ATOMIC_ERROR"
keys t
check "take the server's: my op dropped" "the server's version kept, my operation dropped"
keys y
check "the rest is committed" "applied 1 operation atomically"
lookup draft-5 | grep -q NOT_FOUND && ok "the innocent delete went through" || bad "draft-5: $(lookup draft-5)"
lookup draft-4 | grep -q '"value":9' && bad "my dropped update was sent" || ok "the server's draft-4 stays"
keys Enter

# 4. Force.
open_record draft-6
edit_field 2 "Forced"
force_text draft-6 "Someone else"
keys c y
check "conflict for force" "SERVER NOW"
keys f
check "force is said in the preview" "FORCED"
check "and sent as forceUpdate" '"operationType": "forceUpdate"'
keys y
check "forced commit applied" "applied 1 operation"
lookup draft-6 | grep -q '"Forced"' && ok "the forced value is on the server" || bad "draft-6: $(lookup draft-6)"
keys Enter

# 5. Deleted on the server meanwhile: re-create it with my version.
open_record draft-8
edit_field 2 "Recreated"
other_writer '{"operationType":"forceDelete","record":{"recordName":"draft-8"}}'
keys c y
check "deleted on the server: its own prompt" "DELETED on the server"
keys r
check "re-create goes out as create" '"operationType": "create"'
check "and What changes says so, whole" "CREATE Drafts › draft-8"
keys y
check "re-created" "applied 1 operation"
lookup draft-8 | grep -q '"Recreated"' && lookup draft-8 | grep -q '"pinned"' && ok "re-created with my version, all fields" || bad "draft-8: $(lookup draft-8)"
keys Enter

# 6. Abort: nothing applied, the op stays staged on its original tag.
open_record draft-7
edit_field 2 "Aborted"
force_text draft-7 "Winner"
keys c y
check "conflict to abort" "SERVER NOW"
keys a
check "abort says nothing was applied" "commit aborted: nothing was applied"
check "the batch still holds the op" "UPDATE private › Drafts › draft-7"
lookup draft-7 | grep -q '"Winner"' && ok "the server keeps the other writer's value" || bad "draft-7: $(lookup draft-7)"
keys X y
check "X y discards everything" "discarded 1 staged operation"

# 6b. Merge field by field: keep my pinned, take the server's text.
open_record draft-13
edit_field 2 "MergeMine"
edit_field 1 4
force_text draft-13 "MergeTheirs"
keys c y
check "conflict to merge" "SERVER NOW"
keys g
check "merge mode lists my fields" "MERGE: j/k field"
keys j Space Enter
check "the merge is said in the preview" "merged field by field"
keys y
check "the merged batch is committed" "applied 1 operation"
lookup draft-13 | grep -q '"MergeTheirs"' && lookup draft-13 | grep -q '"pinned":{"value":4' && ok "merged: my pinned, the server's text" || bad "draft-13: $(lookup draft-13)"
keys Enter

# 6c. Edit again: re-based on the server's version, then committed after another look.
open_record draft-15
edit_field 2 "EditMine"
force_text draft-15 "EditTheirs"
keys c y
check "conflict to edit again" "SERVER NOW"
keys e
check "edit again opens the record, re-based" "re-based 'draft-15' on the server's version"
check "showing my staged value over the server's" "was: EditTheirs"
keys c y
check "committed after editing again" "applied 1 operation"
lookup draft-15 | grep -q '"EditMine"' && ok "my edit is on the server" || bad "draft-15: $(lookup draft-15)"
keys Enter

# 7. $EDITOR: invalid JSON reopens the editor with the error on top and the text kept.
open_record draft-11
keys E
check "the JSON edit is staged after the fix" "staged 1 field change to 'draft-11'" 30
[ -f "$WORK/editor-state.kept" ] && ok "the editor reopened with the error on top and the user's text kept" || bad "the editor was not reopened with the text kept"
[ "$(cat "$WORK/editor-state")" = "2" ] && ok "the editor ran twice" || bad "editor runs: $(cat "$WORK/editor-state")"
keys Down Down
check "arrow keys work after the editor" "recordName"

# 8. kill -9 with staged ops: restored on the next start.
open_record draft-9
keys d
check "draft-9 staged" "staged: delete 'draft-9'"
pid=$(tmux -L "$SOCK" display -p '#{pane_pid}')
child=$(pgrep -P "$pid" -x ckbrowse || echo "$pid")
kill -9 "$child"
start
check "the journal is restored with a notice" "restored 2 staged operations from the journal"
keys b
check "the restored batch keeps its ops" "DELETE private › Drafts › draft-9"
check "and the \$EDITOR update" "pinned: 0 → 77"
keys q

# 9. A commit in flight when the process died: checked, not resent.
journal=$(ls "$WORK"/state/ckbrowse/journal-*.sqlite)
python3 - "$journal" "$DB/records/modify?$API" <<'PY'
import json, sqlite3, sys, urllib.request
db = sqlite3.connect(sys.argv[1])
ops = [json.loads(r[0]) for r in db.execute("SELECT operation FROM staged ORDER BY position")]
op = next(o for o in ops if o["recordName"] == "draft-11")
body = {"zoneID": {"zoneName": "Drafts"}, "atomic": True, "operations": [
    {"operationType": "update", "record": {"recordName": "draft-11", "recordType": op["recordType"], "recordChangeTag": op["baseTag"], "fields": op["changes"]}}]}
db.execute("INSERT INTO inflight (position, database, body, sent_at) VALUES (0, 'private', ?, 0)", (json.dumps(body),))
db.commit()
# The request reached the server; the answer was lost with the process.
urllib.request.urlopen(urllib.request.Request(sys.argv[2], data=json.dumps(body).encode(), method="POST")).read()
PY
start
check "the in-flight commit is found applied" "The commit WAS applied" 20
keys b
check "the applied op left the batch" "Staged: 1 record operation in 1 zone"
lookup draft-11 | grep -q '"value":77' && ok "sent once (the update holds)" || bad "draft-11: $(lookup draft-11)"
keys q

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
