#!/usr/bin/env bash
# Runs every reliability test (see RELIABILITY.md) and prints their figures. Bounded: a few minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
export CKBROWSE_BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
[ -x "$CKBROWSE_BIN" ] || swift build --product ckbrowse >/dev/null
status=0
for t in crash.py fuzz.py load.py throttle.py hostile.py staged_kill.py shutdown.py; do
    echo "== $t"
    (cd tests/reliability && timeout 900 python3 "$t" $( [ "$t" = staged_kill.py ] && echo 12 )) || status=1
done
for t in terminal.sh secrets.sh bind.sh; do
    echo "== $t"
    timeout 600 "tests/reliability/$t" || status=1
done
exit $status
