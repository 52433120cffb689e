#!/usr/bin/env bash
# Issue 33's size and start-up figures, on the binary scripts/package.sh ships (the static build,
# stripped): its size, and the time from starting the demo browser (`ckbrowse` with no arguments) in a
# 100x30 tmux window until its first frame shows the demo's zones; a first start (which seeds the demo
# container) and the median of RUNS warm starts. The frame is found by polling tmux every 5 ms, so a
# figure includes up to that much (and tmux's own start). Then the instructions before that frame on a
# warm start, which the machine's load does not move: callgrind (the whole process, every thread) is
# told to dump its counts as soon as the frame shows (callgrind_control; the browser is idle by then).
# Usage: scripts/bench-startup.sh [RUNS]   (default 5; builds scripts/build-static.sh if missing, REBUILD=1 forces;
# CALLGRIND=0 skips the count; CKBROWSE_STATIC=path measures another static build; CKBROWSE_ARGS="browse"
# starts it through the subcommand, i.e. through ArgumentParser; PROFILE=file keeps callgrind's dump, symbols kept)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
command -v tmux >/dev/null || { SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo; $SUDO apt-get install -y -qq tmux >/dev/null; }
BIN=${CKBROWSE_STATIC:-.build-static/release/ckbrowse}
[ -n "${CKBROWSE_STATIC:-}" ] || { [ -x "$BIN" ] && [ -z "${REBUILD:-}" ]; } || scripts/build-static.sh
WORK=$(mktemp -d); trap 'tmux -L ckb-start kill-server >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
cp "$BIN" "$WORK/ckbrowse" && strip "$WORK/ckbrowse"
# (valgrind's DWARF reader gives up on the static build's debug info; the symbol table is kept for PROFILE)
cp "$BIN" "$WORK/ckbrowse-cg" && strip --strip-debug "$WORK/ckbrowse-cg"
ARGS=${CKBROWSE_ARGS:-}
mkdir -p "$WORK/home"
first_frame() {  # [command] → milliseconds until the first frame (of ckbrowse, or of the command)
    local t0 t1
    tmux -L ckb-start kill-server >/dev/null 2>&1 || true
    t0=$(date +%s%N)
    tmux -L ckb-start -f /dev/null new-session -d -x 100 -y 30 "env -i TERM=tmux-256color LANG=C.UTF-8 HOME=$WORK/home ${1:-$WORK/ckbrowse $ARGS}"
    for _ in $(seq 1 12000); do tmux -L ckb-start capture-pane -p 2>/dev/null | grep -q "private · 3 zones" && break; sleep 0.005; done
    t1=$(date +%s%N)
    tmux -L ckb-start capture-pane -p 2>/dev/null | grep -q "private · 3 zones" || { echo "no first frame" >&2; exit 1; }
    tmux -L ckb-start send-keys q 2>/dev/null || true
    sleep 0.3
    echo $(( (t1 - t0) / 1000000 ))
}
first_frame_instructions() {  # → instructions until the first frame, warm start, under callgrind
    local pid="" dump=""
    tmux -L ckb-start kill-server >/dev/null 2>&1 || true
    rm -f "$WORK"/frame.*
    tmux -L ckb-start -f /dev/null new-session -d -x 100 -y 30 \
        "env -i TERM=tmux-256color LANG=C.UTF-8 HOME=$WORK/home $(command -v valgrind) --tool=callgrind --log-file=$WORK/frame.vg.%p --callgrind-out-file=$WORK/frame.cg.%p $WORK/ckbrowse-cg $ARGS"
    for _ in $(seq 1 6000); do tmux -L ckb-start capture-pane -p 2>/dev/null | grep -q "private · 3 zones" && break; sleep 0.01; done
    tmux -L ckb-start capture-pane -p 2>/dev/null | grep -q "private · 3 zones" || { echo "no first frame under callgrind" >&2; exit 1; }
    for log in "$WORK"/frame.vg.*; do pid=${log##*.}; done
    callgrind_control -d "$pid" >/dev/null 2>&1
    for _ in $(seq 1 600); do dump=$(ls "$WORK"/frame.cg."$pid".* 2>/dev/null | head -1); [ -n "$dump" ] && grep -q "^totals:" "$dump" && break; sleep 0.1; done
    tmux -L ckb-start send-keys q 2>/dev/null || true
    sleep 1
    [ -z "${PROFILE:-}" ] || cp "$dump" "$PROFILE"
    sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$dump"
}
COLD=$(first_frame)
WARM=()
for _ in $(seq 1 "$RUNS"); do WARM+=("$(first_frame)"); done
# What of that is tmux's and this script's: the same measurement of a command that prints the frame's
# line at once (tmux starting its server and the command, the polling). It moves with the machine
# (medians of 37–45 ms, single runs 26–57 ms, on 2026-12-02's machine): the part ckbrowse adds is the difference.
FLOOR=()
for _ in $(seq 1 "$RUNS"); do FLOOR+=("$(first_frame "sh -c 'printf \"private · 3 zones\"; sleep 60'")"); done
INSTRUCTIONS=""
if [ "${CALLGRIND:-1}" != 0 ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    command -v valgrind >/dev/null || $SUDO apt-get install -y -qq valgrind >/dev/null
    INSTRUCTIONS=$(first_frame_instructions)
fi
python3 - "$(stat -c %s "$WORK/ckbrowse")" "$INSTRUCTIONS" "$COLD" "${FLOOR[*]}" "${WARM[@]}" <<'PY'
import statistics, sys
size, instructions, cold, warm = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), [int(x) for x in sys.argv[5:]]
floor = [int(x) for x in sys.argv[4].split()]
print(f"binary: {size / 1e6:.1f} MB stripped, static Swift runtime (budget: at most 50 MB)")
print(f"first frame of the demo browser: {statistics.median(warm)} ms warm (median of {len(warm)}: {', '.join(map(str, warm))}), "
      f"{cold} ms on a first start (seeds the demo container) (budget: at most 50 ms warm)")
print(f"the same for a command that prints that line at once (tmux and the polling alone): {statistics.median(floor)} ms "
      f"(median of {len(floor)}: {', '.join(map(str, floor))}); ckbrowse's part: {statistics.median(warm) - statistics.median(floor)} ms")
if instructions:
    print(f"instructions before the first frame (callgrind, warm start): {int(instructions):,}")
PY
