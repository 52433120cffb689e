#!/usr/bin/env bash
# End-to-end: sharing as the second user sees it, in tmux at 80x24 and 100x30, against
# `ckbrowse serve --seed demo` on loopback (demo shares Drafts read-write and exhibition-1 read-only
# with guest): the owner's name on the shared zones, :accept of the share URL serve printed, browsing
# the shared record, a READ_ONLY refusal before anything is staged, an edit committed to the owner's
# zone, and the owner removing the guest (through the API, with curl) seen by the guest on refresh;
# then the owner shares another record from the browser (:share, i, c) and the server has it.
# Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=sharing
source tests/e2e/lib.sh

for size in ${E2E_SIZES:-80x24 100x30}; do
    W=${size%x*}; H=${size#*x}
    # A fresh demo server for each size: the guest starts with Drafts accepted and the exhibition invited.
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK/data"
    start_demo_serve
    # serve prints the demo's share URLs after "listening on".
    for _ in $(seq 1 100); do grep -qs "demo share of 'exhibition-1'" "$WORK/serve.log" && break; sleep 0.05; done
    SHARE_URL=$(grep -o "http://[^ ]*/share/[A-Za-z0-9]*" "$WORK/serve.log" | tail -1)
    OWNER_API="ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token"
    GUEST="env LANG=C.UTF-8 TERM=xterm-256color HOME=$WORK/home-$size CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery \
      CLOUDKIT_DATABASE=shared CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-guest-token $BIN"
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" "$GUEST"

    check "$size: the guest's shared database lists Drafts" "Drafts" 60
    check "$size: with its owner's name" "demo <demo@example"
    # Accept the exhibition's share from the URL serve printed.
    keys : "accept $SHARE_URL" Enter
    check "$size: :accept accepts the share" "accepted: 'exhibition-1' in zone Gallery"
    check "$size: the shared zone appears" "2 zones"
    # The shared hierarchy only: exhibition-1 and its share record.
    keys / Gallery Enter
    wait_for "1 of 2" 10 >/dev/null
    keys Enter
    check "$size: Gallery opens with what was shared" "2 loaded" 20
    keys Escape : "open exhibition-1" Enter
    check "$size: the shared record opens" "recordName                           exhibition-1"
    keys g e
    check "$size: READ_ONLY is refused before anything is staged" "is shared with you READ_ONLY by demo"
    if screen | grep -q "staged:"; then bad "$size: something was staged"; else ok "$size: nothing staged"; fi
    # Its share: who it is shared with.
    keys : "open share-exhibition-1" Enter
    check "$size: the share record shows its participants" "guest <guest@example.com> (you)"
    check "$size: with the permission and status" "READ_ONLY · ACCEPTED"
    # Drafts is READ_WRITE: an edit is committed to the owner's zone.
    keys z Escape / Drafts Enter
    wait_for "1 of 2" 10 >/dev/null
    keys Enter
    check "$size: Drafts opens" "25 loaded" 20
    keys : "open draft-5" Enter
    wait_for "recordName                           draft-5" 10 >/dev/null
    keys g j e C-u
    keys -l "edited by guest at $size"
    keys Enter
    check "$size: the edit is staged" "staged: 'text' of 'draft-5'"
    keys c
    check "$size: the preview goes to the shared database" "/shared/records/modify"
    keys y
    check "$size: committed to the owner's zone" "applied 1 operation"
    keys Escape
    owner=$(curl -s -X POST "$DB/records/lookup?$OWNER_API" -d '{"zoneID":{"zoneName":"Drafts"},"records":[{"recordName":"draft-5"}]}')
    grep -q "edited by guest at $size" <<< "$owner" && ok "$size: the owner sees the guest's edit" || bad "$size: the owner's draft-5: $owner"
    # The owner removes the guest from Drafts: on refresh the zone is gone from the guest's list.
    tag=$(curl -s -X POST "$DB/records/lookup?$OWNER_API" -d '{"zoneID":{"zoneName":"Drafts"},"records":[{"recordName":"cloudkit.zoneshare"}]}' \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"][0]["recordChangeTag"])')
    curl -s -X POST "$DB/records/modify?$OWNER_API" -d "{\"zoneID\":{\"zoneName\":\"Drafts\"},\"operations\":[{\"operationType\":\"update\",\"record\":{\"recordName\":\"cloudkit.zoneshare\",\"recordType\":\"cloudkit.share\",\"recordChangeTag\":\"$tag\",\"participants\":[]}}]}" > /dev/null
    keys z Escape r
    check "$size: after the removal the guest has one zone" "1 zone" 20
    if screen | grep -q " Drafts "; then bad "$size: Drafts is still listed"; else ok "$size: Drafts is gone"; fi
    keys q

    # The owner shares another exhibition from the browser: :share, i invites, c commits.
    OWNER="env LANG=C.UTF-8 TERM=xterm-256color HOME=$WORK/owner-$size CLOUDKIT_SERVER=$URL CLOUDKIT_CONTAINER=iCloud.com.example.Gallery \
      CLOUDKIT_DATABASE=private CLOUDKIT_API_TOKEN=ckbrowse-demo-api-token CLOUDKIT_WEB_AUTH_TOKEN=ckbrowse-demo-web-auth-token $BIN"
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" "$OWNER"
    check "$size: the owner's browser starts" "Gallery" 60
    keys / Gallery Enter
    wait_for "1 of" 10 >/dev/null
    keys Enter
    wait_for "loaded" 20 >/dev/null
    keys Escape : "open exhibition-2" Enter
    check "$size: the owner opens exhibition-2" "recordName                           exhibition-2"
    keys : share Enter
    check "$size: :share stages a new share" "staged: a new share of 'exhibition-2'"
    keys i
    check "$size: i asks whom to invite" "invite (EMAIL [READ_ONLY|READ_WRITE])"
    keys -l "guest@example.com READ_WRITE"
    keys Enter
    check "$size: the invitation is staged" "<guest@example.com> · READ_WRITE · to"
    keys c
    check "$size: the preview creates the share record" '"recordType": "cloudkit.share"'
    keys y
    check "$size: the share is committed" "applied 1 operation"
    keys Escape
    share=$(curl -s -X POST "$DB/records/lookup?$OWNER_API" -d '{"zoneID":{"zoneName":"Gallery"},"records":[{"recordName":"share-exhibition-2"}]}')
    grep -q '"emailAddress":"guest@example.com"' <<< "$share" && grep -q '"READ_WRITE"' <<< "$share" && ok "$size: the server has the share and its participant" || bad "$size: share-exhibition-2: $share"
    root=$(curl -s -X POST "$DB/records/lookup?$OWNER_API" -d '{"zoneID":{"zoneName":"Gallery"},"records":[{"recordName":"exhibition-2"}]}')
    grep -q '"share":{"recordName":"share-exhibition-2"' <<< "$root" && ok "$size: the root links its share" || bad "$size: exhibition-2: $root"
    keys q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
