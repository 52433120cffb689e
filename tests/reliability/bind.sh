#!/usr/bin/env bash
# `ckbrowse serve` binds loopback unless told otherwise, and says so when it does not.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
WORK=$(mktemp -d); passed=0; failed=0
trap 'kill $P1 $P2 2>/dev/null; rm -rf $WORK' EXIT
ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; }
"$BIN" serve --data "$WORK/a" --port 0 --api-token t > "$WORK/a.out" 2> "$WORK/a.err" & P1=$!
"$BIN" serve --data "$WORK/b" --host 0.0.0.0 --port 0 --api-token t > "$WORK/b.out" 2> "$WORK/b.err" & P2=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/a.out" && grep -q "listening on" "$WORK/b.out" && break; sleep 0.1; done
port=$(grep -o "127.0.0.1:[0-9]*" "$WORK/a.out" | head -1 | cut -d: -f2)
grep -q "listening on http://127.0.0.1:" "$WORK/a.out" && ! grep -qi "warning: binding" "$WORK/a.err" && ok "the default is 127.0.0.1, without a warning" || bad "default bind: $(cat "$WORK/a.out" "$WORK/a.err")"
if command -v ss > /dev/null; then
    ss -ltn | grep -q "127.0.0.1:$port " && ok "the socket is bound to 127.0.0.1:$port only" || bad "socket: $(ss -ltn | grep ":$port ")"
fi
grep -q "warning: binding 0.0.0.0, not loopback" "$WORK/b.err" && ok "--host 0.0.0.0 warns that other machines can reach it" || bad "no warning for 0.0.0.0: $(cat "$WORK/b.err")"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
