#!/usr/bin/env bash
# Issue 8's work-per-key-press figure, counted in instructions by callgrind: `j` presses through the
# browser core (update, cache window reads, render) over a cache of 1,000 and of 1,000,000 records.
# Valgrind 3.19 crashes inside itself on binaries linked against the shared Swift runtime, but runs the
# static build (scripts/build-static.sh); its debug info is stripped first (valgrind's DWARF reader
# gives up on it), the symbol table stays for --toggle-collect=ckbrowse_bench_keypresses.
# Per press = (instructions with N presses - instructions with 0 presses) / (5 runs x N presses).
# Usage: scripts/bench-callgrind.sh [PRESSES]   (default 300; about 2 minutes of valgrind at 300)
set -euo pipefail
cd "$(dirname "$0")/.."
PRESSES=${1:-300}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
command -v valgrind >/dev/null || $SUDO apt-get install -y -qq valgrind >/dev/null
[ -x .build-static/release/ckbrowse ] && [ -z "${REBUILD:-}" ] || scripts/build-static.sh
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
cp .build-static/release/ckbrowse "$WORK/ckbrowse" && strip --strip-debug "$WORK/ckbrowse"
count() {  # records presses → instructions in ckbrowse_bench_keypresses
    valgrind --tool=callgrind --toggle-collect=ckbrowse_bench_keypresses --callgrind-out-file="$WORK/cg.out" \
        "$WORK/ckbrowse" bench keypress --records "$1" --presses "$2" --cache-directory "$WORK/cache-$1" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
declare -A PER
for records in 1000 1000000; do
    "$WORK/ckbrowse" bench keypress --records $records --cache-directory "$WORK/cache-$records" --prepare-only >/dev/null
    base=$(count $records 0); total=$(count $records "$PRESSES")
    PER[$records]=$(( (total - base) / (5 * PRESSES) ))
    printf "%9d records: %d instructions per key press (%d presses x 5 runs)\n" $records "${PER[$records]}" "$PRESSES"
done
python3 -c "import sys; a, b = int(sys.argv[1]), int(sys.argv[2]); print(f'1,000,000 / 1,000: {b / a:.3f}  (budget: at most 2)')" "${PER[1000]}" "${PER[1000000]}"
