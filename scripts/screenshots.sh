#!/usr/bin/env bash
# Makes screenshots/*.png from real tmux runs of the demo browser (colours kept).
# Installs what it needs: Pillow and wcwidth from PyPI, Noto CJK from Debian (for CJK glyphs).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import PIL, wcwidth" 2>/dev/null || pip install -q pillow wcwidth
if command -v apt-get >/dev/null && ! dpkg-query -W -f='${Status}' fonts-noto-cjk 2>/dev/null | grep -q "ok installed"; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get install -y -qq fonts-noto-cjk >/dev/null || echo "warning: no CJK font; CJK glyphs will be boxes" >&2
fi
swift build --product ckbrowse >/dev/null
BIN=$(swift build --show-bin-path)/ckbrowse
WORK=$(mktemp -d); SOCK="ckb-shots-$$"
trap 'tmux -L $SOCK kill-server 2>/dev/null; rm -rf $WORK' EXIT
mkdir -p screenshots
COLS=100; ROWS=30
tmux -L "$SOCK" -f /dev/null new-session -d -x $COLS -y $ROWS \
    "env LANG=C.UTF-8 TERM=tmux-256color TZ=UTC XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache $BIN"
wait_for() { for _ in $(seq 1 600); do tmux -L "$SOCK" capture-pane -p | grep -qF -- "$1" && return 0; sleep 0.1; done; echo "timeout waiting for $1" >&2; exit 1; }
shot() { sleep 0.3; tmux -L "$SOCK" capture-pane -e -p > "$WORK/$1.ans"; python3 scripts/render_ansi.py "$WORK/$1.ans" "screenshots/$1.png" $COLS $ROWS; echo "screenshots/$1.png"; }
keys() { tmux -L "$SOCK" send-keys "$@"; }
wait_for "3 zones"; shot zones
keys j j Enter; wait_for "200 loaded"; keys j j j j j; shot records
keys : "open artwork-0017" Enter; wait_for "FIELDS"; keys j j; shot record-detail
keys Enter; wait_for "artist-lee-ufan"; shot reference-followed
keys Escape Escape Escape s; wait_for "artwork-changes"; shot subscriptions
keys j Enter; wait_for "alertLocalizationKey"; shot subscription-detail
keys Escape "?"; wait_for "Keys"; shot help
keys x D; wait_for "records/changes"; shot debug
keys q
