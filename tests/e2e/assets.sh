#!/usr/bin/env bash
# End-to-end: assets, in tmux at 80x24 and 100x30, against `ckbrowse serve --seed demo` on loopback:
# the demo's real uploaded pictures shown with size and checksum, `o` saving one (the prompt, the
# file, byte for byte what curl downloads, never overwriting), `e` staging a local file (a missing
# one refused), the commit uploading it, and `ckbrowse get --asset` writing it back out.
# Waits on screen conditions; prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=assets
source tests/e2e/lib.sh

for size in ${E2E_SIZES:-80x24 100x30}; do
    W=${size%x*}; H=${size#*x}
    restart_demo_serve
    ENVS=$(demo_env "$size")
    DL="$WORK/dl-$size"; mkdir -p "$DL"
    tmux -L "$SOCK" kill-server 2>/dev/null
    SESSIONS=$((SESSIONS + 1)); SOCK="$SOCK_BASE-$SESSIONS"
    tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x "$W" -y "$H" "cd $DL && env $ENVS $BIN"
    check "$size: the browser opens" "Gallery" 60

    keys j j Enter
    wait_for "artwork-0011" 20 > /dev/null
    keys / "artwork-0011" Enter
    check "$size: the record is found" "1 match" 20
    keys Enter
    check "$size: an asset shows its size and checksum" "1,089 bytes · checksum"
    keys / image Enter
    keys o
    check_caret "$size: o asks where, offering a name" "artwork-0011-image▏"
    keys Enter
    check "$size: the asset is saved" "saved 'image' of artwork-0011 to" 20
    url=$(curl -s -X POST "$DB/records/lookup?$API" -d '{"zoneID":{"zoneName":"Gallery"},"records":[{"recordName":"artwork-0011"}]}' \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"][0]["fields"]["image"]["value"]["downloadURL"])')
    curl -s "${url/\$\{f\}/x.svg}" -o "$WORK/curl-$size.svg"
    cmp -s "$DL/artwork-0011-image" "$WORK/curl-$size.svg" && grep -q "<svg" "$DL/artwork-0011-image" \
      && ok "$size: the saved file is what the download URL serves" || bad "$size: saved file differs from curl's"
    keys o Enter
    check "$size: an existing file is never overwritten" "give another name" 20
    check_caret "$size: the name typed is kept to be changed" "artwork-0011-image▏"
    keys Escape

    # A local file staged into the field, uploaded on commit.
    head -c 3000000 /dev/urandom > "$DL/scan.bin"
    keys e
    check_caret "$size: e on an asset asks for a file" "(PATH): ▏"
    keys "missing.bin" Enter
    check "$size: a missing file is refused, nothing staged" "nothing staged: no file $DL/missing.bin"
    check_caret "$size: the path stays on the line to be fixed" "(PATH): missing.bin▏"
    keys C-u "scan.bin" Enter
    check "$size: the file is staged, shown as a file" "uploaded on commit"
    keys c
    check_joined "$size: the preview says the file goes first" "is uploaded first" 20
    keys y
    check "$size: the commit applies it" "applied 1 operation" 30
    keys Escape
    check "$size: the record shows the uploaded size" "3,000,000 bytes" 20
    env $ENVS "$BIN" get artwork-0011 --zone Gallery --asset image --to "$WORK/get-$size.bin" 2> "$WORK/get.err"
    cmp -s "$DL/scan.bin" "$WORK/get-$size.bin" && ok "$size: ckbrowse get --asset writes the uploaded file" \
      || { bad "$size: get --asset"; cat "$WORK/get.err"; }
    env $ENVS "$BIN" get artwork-0011 --zone Gallery --asset title --to "$WORK/no.bin" 2> "$WORK/get.err"
    grep -q "is STRING, not an asset" "$WORK/get.err" && ok "$size: get --asset on a non-asset field says so" || { bad "$size: get --asset title"; cat "$WORK/get.err"; }
    env $ENVS "$BIN" get artwork-0011 --zone Gallery --asset image --index 3 --to "$WORK/index.bin" 2> "$WORK/get.err"; status=$?
    [ $status -ne 0 ] && [ ! -e "$WORK/index.bin" ] && grep -q "holds one asset (ASSETID): --index is for an ASSETID_LIST field" "$WORK/get.err" \
      && ok "$size: get --asset --index 3 on a single asset is refused" || { bad "$size: --index on one asset (exit $status)"; cat "$WORK/get.err"; }
    # An existing file is left alone, as the browser's o leaves it; --force writes over it.
    echo precious > "$WORK/kept-$size.txt"
    env $ENVS "$BIN" get artwork-0011 --zone Gallery --asset image --to "$WORK/kept-$size.txt" 2> "$WORK/get.err"; status=$?
    [ $status -eq 64 ] && [ "$(cat "$WORK/kept-$size.txt")" = precious ] && grep -q "exists (nothing overwritten)" "$WORK/get.err" \
      && ok "$size: get --asset leaves an existing file alone" || { bad "$size: get --asset over a file (exit $status)"; cat "$WORK/get.err"; }
    env $ENVS "$BIN" get artwork-0011 --zone Gallery --asset image --to "$WORK/kept-$size.txt" --force 2> "$WORK/get.err"
    cmp -s "$DL/scan.bin" "$WORK/kept-$size.txt" && ok "$size: get --asset --force writes over it" || { bad "$size: get --asset --force"; cat "$WORK/get.err"; }
    keys q
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
