#!/usr/bin/env bash
# Issue 33's size and start-up figures, on the binary scripts/package.sh ships (the static build,
# stripped): its size, and the time from starting the demo browser (`ckbrowse` with no arguments) in a
# 100x30 tmux window until its first frame shows the demo's zones; a first start (which seeds the demo
# container) and the median of RUNS warm starts. The frame is found by polling tmux every 5 ms, so a
# figure includes up to that much (and tmux's own start).
# Usage: scripts/bench-startup.sh [RUNS]   (default 5; builds scripts/build-static.sh if missing, REBUILD=1 forces)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
command -v tmux >/dev/null || { SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo; $SUDO apt-get install -y -qq tmux >/dev/null; }
[ -x .build-static/release/ckbrowse ] && [ -z "${REBUILD:-}" ] || scripts/build-static.sh
WORK=$(mktemp -d); trap 'tmux -L ckb-start kill-server >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
cp .build-static/release/ckbrowse "$WORK/ckbrowse" && strip "$WORK/ckbrowse"
mkdir -p "$WORK/home"
first_frame() {  # → milliseconds until the first frame
    local t0 t1
    tmux -L ckb-start kill-server >/dev/null 2>&1 || true
    t0=$(date +%s%N)
    tmux -L ckb-start -f /dev/null new-session -d -x 100 -y 30 "env -i TERM=tmux-256color LANG=C.UTF-8 HOME=$WORK/home $WORK/ckbrowse"
    for _ in $(seq 1 12000); do tmux -L ckb-start capture-pane -p 2>/dev/null | grep -q "private · 3 zones" && break; sleep 0.005; done
    t1=$(date +%s%N)
    tmux -L ckb-start capture-pane -p 2>/dev/null | grep -q "private · 3 zones" || { echo "no first frame" >&2; exit 1; }
    tmux -L ckb-start send-keys q 2>/dev/null || true
    sleep 0.3
    echo $(( (t1 - t0) / 1000000 ))
}
COLD=$(first_frame)
WARM=()
for _ in $(seq 1 "$RUNS"); do WARM+=("$(first_frame)"); done
python3 - "$(stat -c %s "$WORK/ckbrowse")" "$COLD" "${WARM[@]}" <<'PY'
import statistics, sys
size, cold, warm = int(sys.argv[1]), int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
print(f"binary: {size / 1e6:.1f} MB stripped, static Swift runtime (budget: at most 50 MB)")
print(f"first frame of the demo browser: {statistics.median(warm)} ms warm (median of {len(warm)}: {', '.join(map(str, warm))}), "
      f"{cold} ms on a first start (seeds the demo container) (budget: at most 50 ms warm)")
PY
