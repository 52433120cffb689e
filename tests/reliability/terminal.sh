#!/usr/bin/env bash
# The terminal survives: a resize storm (50 resizes in about a second) leaves a correct screen, and a
# crash inside a network task restores the terminal (cooked mode, main screen). SIGTERM and SIGHUP are
# covered by tests/e2e/browser.sh. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
WORK=$(mktemp -d); SOCK="ckb-term-$$"; passed=0; failed=0
trap 'tmux -L $SOCK kill-server 2>/dev/null; tmux -L $SOCK-crash kill-server 2>/dev/null; rm -rf $WORK' EXIT
ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; tmux -L "$SOCK" capture-pane -p 2>/dev/null | sed 's/^/  | /'; }
printf 'set -g default-terminal tmux-256color\nset -g remain-on-exit on\nset -g status off\n' > "$WORK/tmux.conf"
tmux -L "$SOCK" -f "$WORK/tmux.conf" new-session -d -x 100 -y 30 "env LANG=C.UTF-8 TERM=tmux-256color XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state $BIN"
for _ in $(seq 1 600); do tmux -L "$SOCK" capture-pane -p | grep -q "3 zones" && break; sleep 0.1; done
start=$(date +%s.%N)
for i in $(seq 1 50); do
    tmux -L "$SOCK" resize-window -x $((60 + (i * 7) % 90)) -y $((12 + (i * 5) % 40))
    sleep 0.02
done
tmux -L "$SOCK" resize-window -x 100 -y 30
end=$(date +%s.%N)
echo "  50 resizes in $(python3 -c "print(round($end - $start, 2))") s"
expected_title=" ckbrowse › Zones$(printf '%*s' 68 '')? help  q quit"
good=0
for _ in $(seq 1 100); do
    screen=$(tmux -L "$SOCK" capture-pane -p)
    if [ "$(echo "$screen" | head -1)" = "$expected_title" ] && echo "$screen" | sed -n 30p | grep -q "^ local demo › iCloud.com.example.Gallery · development · private · 3 zones" \
        && echo "$screen" | sed -n 2p | grep -q "^ ZONE"; then good=1; break; fi
    sleep 0.1
done
[ $good = 1 ] && ok "after the resize storm the frame is exact at 100×30 (title, header, status bar)" || bad "the frame after the resize storm"
[ "$(tmux -L "$SOCK" display -p '#{pane_dead}')" = "0" ] && ok "the browser is still running" || bad "the browser died in the resize storm"
tmux -L "$SOCK" send-keys j Enter
for _ in $(seq 1 100); do tmux -L "$SOCK" capture-pane -p | grep -q "loaded" && break; sleep 0.1; done
tmux -L "$SOCK" capture-pane -p | grep -q "loaded" && ok "keys work after the storm" || bad "keys after the storm"
tmux -L "$SOCK" kill-server

# A crash in a network task: the crash guard restores the terminal before the process dies.
tmux -L "$SOCK-crash" -f "$WORK/tmux.conf" new-session -d -x 100 -y 30 \
    "env LANG=C.UTF-8 TERM=tmux-256color CKBROWSE_FAULT=crash-in-network-task XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state $BIN 2> $WORK/crash.err; echo \$? > $WORK/crash.code; stty -a > $WORK/crash.stty"
for _ in $(seq 1 300); do [ -s "$WORK/crash.stty" ] && break; sleep 0.1; done
code=$(cat "$WORK/crash.code" 2>/dev/null)
if [ -n "$code" ] && [ "$code" -ge 128 ]; then ok "the injected crash killed the process (status $code)"; else bad "no crash (status '$code')"; fi
grep -qw -- "icanon" "$WORK/crash.stty" && grep -qw -- "echo" "$WORK/crash.stty" && ! grep -qw -- "-icanon" "$WORK/crash.stty" \
    && ok "the terminal is back in cooked mode with echo after the crash" || bad "terminal modes after the crash: $(head -c 300 "$WORK/crash.stty")"
[ "$(tmux -L "$SOCK-crash" display -p '#{alternate_on}')" = "0" ] && ok "the main screen is back (alternate screen off)" || bad "still on the alternate screen"
grep -q "injected fault" "$WORK/crash.err" && ok "the crash message reached stderr, after the terminal was restored" || bad "no crash message on stderr"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
