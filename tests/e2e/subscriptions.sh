#!/usr/bin/env bash
# End-to-end: subscriptions as a workbench (issue 31), in the real browser (tmux) at 80x24 and 100x30
# against `ckbrowse serve` on loopback, keys in bursts: `n` and a scripted $EDITOR write a query
# subscription (a bad comparator first: the editor reopens with the reason and the text kept), the
# batch shows it, `c` previews subscriptions/modify, `y` commits and the server lists it; a change
# made by another process arrives as a push whose payload Enter shows with its keys named; `E` changes
# firesOn, `d` deletes it; a firesOnce subscription that fired is made again with `R`. The server's
# state is read back with curl. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=subs
source tests/e2e/lib.sh

# The scripted editor does what $WORK/editor-mode says: "create" writes a query subscription (the
# first time with a comparator CloudKit lacks; when reopened, it checks the reason is on top and its
# text was kept, then fixes it); "fireson" changes firesOn to delete only.
cat > "$WORK/editor.py" <<'PY'
import json, os, sys
path, work = sys.argv[1], os.environ["E2E_WORK"]
mode = open(os.path.join(work, "editor-mode")).read().strip()
text = open(path).read()
lines = text.split("\n")
body = "\n".join(l for l in lines if not l.lstrip().startswith("//"))
def save(obj): open(path, "w").write(json.dumps(obj, indent=2))
if mode == "create":
    if lines[0].startswith("// ERROR") and "BIGGER_THAN" in body:
        if "unknown comparator 'BIGGER_THAN'" in lines[0]:
            open(os.path.join(work, "editor-reopened"), "w").write("yes")
        save(json.loads(body.replace("BIGGER_THAN", "GREATER_THAN")))
    else:
        sub = json.loads(body)
        open(os.path.join(work, "editor-template"), "w").write(text)
        sub["subscriptionID"] = "e2e-late-works"
        sub["query"]["filterBy"] = [{"fieldName": "year", "comparator": "BIGGER_THAN", "fieldValue": {"value": 1950, "type": "INT64"}}]
        sub["zoneWide"] = False
        sub["zoneID"] = {"zoneName": "Gallery"}
        sub["firesOn"] = ["create", "update"]
        sub["notificationInfo"] = {"alertBody": "A late work changed", "shouldSendContentAvailable": True}
        save(sub)
elif mode == "fireson":
    sub = json.loads(body)
    sub["firesOn"] = ["delete"]
    save(sub)
PY

subs() { curl -s "$DB/subscriptions/list?$API"; }
write() { curl -s -X POST "$DB/records/modify?$API" -d "{\"zoneID\":{\"zoneName\":\"Gallery\"},\"atomic\":false,\"operations\":[$1]}" > /dev/null; }

for size in 80x24 100x30; do
    W=${size%x*}; H=${size#*x}
    restart_demo_serve
    rm -f "$WORK/editor-reopened" "$WORK/editor-template"
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" \
        "env $(demo_env "$size") E2E_WORK=$WORK EDITOR='python3 $WORK/editor.py' $BIN"
    check "$size: the browser starts" "3 zones" 60
    keys N
    check "$size: pushes are listened to" "● listening ·"

    # n, a type, the editor: refused once with the reason on top, then staged.
    echo create > "$WORK/editor-mode"
    keys s
    check "$size: the subscriptions open" "SUBSCRIPTION ID"
    keys n C-u "query Artw" Tab Enter
    check "$size: n stages the subscription written in \$EDITOR" "staged new subscription 'e2e-late-works'"
    [ -f "$WORK/editor-reopened" ] && ok "$size: a bad comparator reopened the editor with the reason, text kept" || bad "$size: the editor was not reopened with the reason"
    grep -q '"notificationInfo"' "$WORK/editor-template" && grep -q '// Fields of Artwork' "$WORK/editor-template" \
        && ok "$size: the template names every key and the type's fields" || bad "$size: the template lacks keys or fields"
    check "$size: the list shows it staged" "e2e-late-works"
    keys b
    check "$size: the batch shows the new subscription" "CREATE SUBSCRIPTION private › e2e-late-works"
    keys c
    check "$size: c previews subscriptions/modify" "subscriptions · 1 create · each on its own"
    keys y
    check "$size: y commits" "'e2e-late-works': created."
    subs | grep -q '"e2e-late-works"' && ok "$size: the server lists it" || bad "$size: the server does not list it"
    keys Escape

    # Another process changes a matching record: the push names the new subscription.
    write '{"operationType":"forceUpdate","record":{"recordName":"artwork-0002","fields":{"year":{"value":1999,"type":"INT64"}}}}'
    keys Escape N
    arrived=no
    for _ in $(seq 1 100); do screen | grep -qE "e2e-late-works +updated" && { arrived=yes; break; }; sleep 0.1; done
    [ $arrived = yes ] && ok "$size: the change arrives as a push of the new subscription" || bad "$size: no push of e2e-late-works"
    # Its row, found with the pane's filter.
    keys / e2e-late Enter g
    keys Enter
    check "$size: Enter shows the push in full, its keys named" "KEYS, NAMED"
    check "$size: the subscription among them" 'ck.qry.sid             "e2e-late-works"'
    keys G
    check "$size: then the payload as received" '"qry": {'

    keys y
    check "$size: y copies the payload" "copied"
    keys Escape Escape Escape

    # E changes firesOn; d deletes it.
    echo fireson > "$WORK/editor-mode"
    keys s
    check "$size: back on the subscriptions" "SUBSCRIPTION ID"
    keys / e2e-late Enter E
    check "$size: E stages a change" "staged a change of subscription 'e2e-late-works'"
    keys Escape c y
    check "$size: the change is committed" "'e2e-late-works': changed."
    subs | python3 -c 'import json,sys; s=[x for x in json.load(sys.stdin)["subscriptions"] if x.get("subscriptionID")=="e2e-late-works"]; sys.exit(0 if s and s[0]["firesOn"]==["delete"] else 1)' \
        && ok "$size: the server has firesOn [delete]" || bad "$size: firesOn not changed on the server"
    keys Escape / e2e-late Enter d
    check "$size: d stages the deletion" "staged the deletion of subscription 'e2e-late-works'"
    keys Escape c y
    check "$size: the deletion is committed" "'e2e-late-works': deleted."
    subs | grep -q '"e2e-late-works"' && bad "$size: the server still lists it" || ok "$size: the server no longer lists it"
    keys Escape
    wait_gone "'e2e-late-works': deleted." 5

    # A firesOnce subscription fires (another process creates a matching record); R makes it again.
    write '{"operationType":"create","record":{"recordName":"exh-e2e","recordType":"Exhibition","fields":{"rating":{"value":4.9,"type":"DOUBLE"}}}}'
    check "$size: the browser says it fired once" "fired once: the server deleted it"
    check "$size: it stays listed as fired" "fired·R"
    keys / first-new Enter R
    check "$size: R stages it again" "staged 'first-new-exhibition' to be created again"
    keys Escape c y
    check "$size: and the commit re-creates it" "'first-new-exhibition': re-created."
    subs | grep -q '"first-new-exhibition"' && ok "$size: the server lists it again" || bad "$size: not re-created on the server"
    keys Escape q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
