#!/usr/bin/env bash
# Builds the self-contained release binary (Swift runtime linked in statically, stripped) and the
# Debian package, then checks them:
#   - ldd lists no Swift library; the binary runs inside a bare chroot that holds only it, the
#     libraries ldd names, and a terminfo entry (no Swift toolchain): --version, serve --help, and the
#     demo browser in tmux until its first frame;
#   - the .deb installs with apt-get, puts the man page and completions where Debian expects them,
#     runs, and is removed cleanly.
# Prints the binary's size and its start-up time to the first frame of the demo browser.
# Usage: scripts/package.sh [--no-install-test]
set -euo pipefail
# chroot, mount and dpkg-shlibdeps live in sbin on Debian; a bare PATH (env -i, cron) may lack it.
export PATH="$PATH:/usr/sbin:/sbin"
cd "$(dirname "$0")/.."
INSTALL_TEST=1; [ "${1:-}" = "--no-install-test" ] && INSTALL_TEST=0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
for tool in tmux dpkg-deb objcopy; do command -v $tool >/dev/null || $SUDO apt-get install -y -qq tmux dpkg-dev binutils >/dev/null; done

VERSION=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/ckbrowse/CKBrowse.swift)
ARCH=$(dpkg --print-architecture)
echo "== building ckbrowse $VERSION (release, static Swift runtime)"
scripts/build-static.sh
mkdir -p dist
cp .build-static/release/ckbrowse dist/ckbrowse
strip dist/ckbrowse
fail=0
check() { if eval "$2"; then echo "  ok   $1"; else echo "  FAIL $1"; fail=1; fi; }

echo "== the binary"
LIBS=$(ldd dist/ckbrowse)
echo "$LIBS" | sed 's/^/    /'
check "ldd lists no Swift library" "! echo \"\$LIBS\" | grep -qi swift"
# Only the system's libc (with libm, the loader and libgcc_s, which libc6 depends on), ncursesw (with
# its libtinfo) and SQLite.
EXTRA=$(echo "$LIBS" | awk '{print $1}' | grep -vE '^(linux-vdso|libc\.so|libm\.so|libgcc_s\.so|/lib64/ld-linux|ld-linux|libncursesw\.so|libtinfo\.so|libsqlite3\.so)' || true)
check "it needs nothing but libc, ncursesw and SQLite${EXTRA:+ (also: $(echo $EXTRA))}" "[ -z \"\$EXTRA\" ]"
SIZE=$(stat -c %s dist/ckbrowse)
# No module uses Foundation proper, which would link ICU's data (34 MB) in (ARCHITECTURE.md); the
# unstripped build still names what it linked.
ICU=$(nm .build-static/release/ckbrowse 2>/dev/null | grep -cE 'icudt[0-9]+_dat|_ZN6icu_' || true)
check "ICU is not linked (found $ICU ICU symbols)" "[ \"\$ICU\" = 0 ]"
check "the stripped binary is at most 50 MB ($SIZE bytes)" "[ \"\$SIZE\" -le 50000000 ]"
# The tests run the debug build, which links Foundation whole; the shipped one has FoundationEssentials
# only, where an API that needs ICU (TimeZone.current) stops the process. Page records, show times in a
# zone that is not UTC.
check "the shipped binary pages records and shows local times (bench terminal, TZ=Europe/Berlin)" "TZ=Europe/Berlin dist/ckbrowse bench terminal >/dev/null 2>&1"

# A bare root: the binary, the libraries ldd names, /bin/sh for tmux, a terminfo entry. No Swift.
ROOT=$(mktemp -d); trap '$SUDO umount "$ROOT/proc" 2>/dev/null || true; $SUDO rm -rf "$ROOT"; tmux -L ckb-pkg kill-server 2>/dev/null || true' EXIT
mkdir -p "$ROOT/usr/bin" "$ROOT/tmp" "$ROOT/usr/share/terminfo/t" "$ROOT/root" "$ROOT/proc"
cp dist/ckbrowse "$ROOT/usr/bin/"
for lib in $(echo "$LIBS" | grep -o '/[^ ]*'); do mkdir -p "$ROOT$(dirname "$lib")"; cp -L "$lib" "$ROOT$lib"; done
TI=$(find /usr/share/terminfo /lib/terminfo -name tmux-256color 2>/dev/null | head -1)
cp "$TI" "$ROOT/usr/share/terminfo/t/"
# The C.UTF-8 locale every Debian has (libc-bin), for wide characters.
if [ -d /usr/lib/locale/C.utf8 ]; then mkdir -p "$ROOT/usr/lib/locale" && cp -r /usr/lib/locale/C.utf8 "$ROOT/usr/lib/locale/"; fi
# The root needs /proc (a kernel view, not a library): see below. Where mount or chroot is not
# permitted (PACKAGE_NO_CHROOT=1 forces this), the binary runs in place instead and the libraries
# mapped into the running process are checked.
CAN_CHROOT=1
[ -n "${PACKAGE_NO_CHROOT:-}" ] && CAN_CHROOT=0
# Not checked without /proc: Linux libdispatch (which Swift concurrency runs on) has a monitor that
# reads /proc/[tid]/stat of each worker thread about once a second and aborts the process ("workq:
# registered worker exited prematurely") when it cannot open it. Even `--version` died that way in 12
# of 200 runs in a chroot without /proc (2026-11-24), so a check of it could only pass by luck.
if [ $CAN_CHROOT = 1 ]; then
    $SUDO mount -t proc proc "$ROOT/proc" 2>/dev/null || $SUDO mount --bind /proc "$ROOT/proc" 2>/dev/null || CAN_CHROOT=0
fi
if [ $CAN_CHROOT = 1 ] && $SUDO chroot "$ROOT" /usr/bin/ckbrowse --version 2>&1 | grep -q "not permitted"; then CAN_CHROOT=0; fi
if [ $CAN_CHROOT = 1 ]; then
    check "chroot: ckbrowse --version" "$SUDO chroot \"\$ROOT\" /usr/bin/ckbrowse --version | grep -q \"$VERSION\""
    # grep reads to the end: `grep -q` stops at the first match, and a help longer than one 4 KB
    # stdio buffer then dies writing its second half (SIGPIPE), which pipefail counts as a failure.
    check "chroot: ckbrowse serve --help" "$SUDO chroot \"\$ROOT\" /usr/bin/ckbrowse serve --help | grep 'local CloudKit' > /dev/null"
    check "no Swift library anywhere in the chroot" "! find \"\$ROOT\" -path \"\$ROOT/proc\" -prune -o -name '*swift*' -print | grep -q ."
    CMD="$SUDO env -i TERM=tmux-256color LANG=C.UTF-8 HOME=/root $(command -v chroot) $ROOT /usr/bin/ckbrowse"
    WHERE="chroot"
else
    echo "  note: mount/chroot not permitted here: running the binary in place, checking its mapped libraries"
    check "ckbrowse --version" "dist/ckbrowse --version | grep -q \"$VERSION\""
    check "ckbrowse serve --help" "dist/ckbrowse serve --help | grep 'local CloudKit' > /dev/null"
    CMD="env -i TERM=tmux-256color LANG=C.UTF-8 HOME=$ROOT/root $PWD/dist/ckbrowse"
    WHERE="in place"
fi

# First frame of the demo browser (a first start seeds the demo container; then a warm start). The
# libraries mapped into the running process are saved for the check below.
first_frame() {
    local t0 t1 pid
    tmux -L ckb-pkg kill-server >/dev/null 2>&1 || true
    t0=$(date +%s%N)
    tmux -L ckb-pkg -f /dev/null new-session -d -x 100 -y 30 "$1"
    for _ in $(seq 1 12000); do tmux -L ckb-pkg capture-pane -p 2>/dev/null | grep -q "private · 3 zones" && break; sleep 0.005; done
    t1=$(date +%s%N)
    tmux -L ckb-pkg capture-pane -p 2>/dev/null | grep -q "private · 3 zones" || { echo "  FAIL no first frame" >&2; touch "$ROOT/tmp/no-frame"; }
    pid=$(pgrep -f "ckbrowse$" -n 2>/dev/null || true)
    [ -n "$pid" ] && $SUDO cat "/proc/$pid/maps" > "$ROOT/tmp/maps" 2>/dev/null || true
    tmux -L ckb-pkg send-keys q 2>/dev/null || true
    echo $(( (t1 - t0) / 1000000 ))
}
COLD=$(first_frame "$CMD"); sleep 0.5
WARM=$(first_frame "$CMD")
check "$WHERE: the demo browser draws its first frame in tmux (first and warm start)" "[ ! -e \"\$ROOT/tmp/no-frame\" ]"
check "$WHERE: the running browser maps no Swift library" "[ -s \"\$ROOT/tmp/maps\" ] && grep -q ckbrowse \"\$ROOT/tmp/maps\" && ! grep -qi 'libswift' \"\$ROOT/tmp/maps\""

echo "== the Debian package"
PKG="dist/deb/ckbrowse_${VERSION}_${ARCH}"
rm -rf "$PKG"; mkdir -p "$PKG/DEBIAN" "$PKG/usr/bin" "$PKG/usr/share/man/man1" "$PKG/usr/share/doc/ckbrowse" \
    "$PKG/usr/share/bash-completion/completions" "$PKG/usr/share/zsh/vendor-completions" "$PKG/usr/share/fish/vendor_completions.d"
install -m 755 dist/ckbrowse "$PKG/usr/bin/ckbrowse"
if [ ! -f docs/man/ckbrowse.1 ]; then scripts/man.sh >/dev/null; fi
gzip -9n < docs/man/ckbrowse.1 > "$PKG/usr/share/man/man1/ckbrowse.1.gz"
dist/ckbrowse --generate-completion-script bash > "$PKG/usr/share/bash-completion/completions/ckbrowse"
dist/ckbrowse --generate-completion-script zsh > "$PKG/usr/share/zsh/vendor-completions/_ckbrowse"
dist/ckbrowse --generate-completion-script fish > "$PKG/usr/share/fish/vendor_completions.d/ckbrowse.fish"
cat > "$PKG/usr/share/doc/ckbrowse/copyright" <<'TXT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ckbrowse
Files: *
Copyright: the ckbrowse authors
License: see the project repository
TXT
# Dependencies with the versions the binary needs (the newest symbol version it uses per library, e.g.
# arc4random@GLIBC_2.36 makes libc6 (>= 2.36)), as dpkg-shlibdeps computes them: apt then refuses a
# system whose libraries are too old instead of installing a binary that fails when run.
command -v dpkg-shlibdeps >/dev/null || $SUDO apt-get install -y -qq dpkg-dev >/dev/null
SHL=$(mktemp -d); mkdir -p "$SHL/debian"
printf 'Source: ckbrowse\n\nPackage: ckbrowse\nArchitecture: any\n' > "$SHL/debian/control"
DEPS=$(cd "$SHL" && dpkg-shlibdeps -O -e "$OLDPWD/dist/ckbrowse" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
rm -rf "$SHL"
[ -n "$DEPS" ] || { echo "dpkg-shlibdeps computed no dependencies"; exit 1; }
check "Depends carries the glibc version the binary needs" "echo \"$DEPS\" | grep -q 'libc6 (>= 2\.[0-9]*)'"
INSTALLED=$(du -sk "$PKG/usr" | cut -f1)
cat > "$PKG/DEBIAN/control" <<CTL
Package: ckbrowse
Version: $VERSION
Architecture: $ARCH
Maintainer: ckbrowse developers <ckbrowse@example.invalid>
Installed-Size: $INSTALLED
Depends: $DEPS
Section: utils
Priority: optional
Homepage: https://github.com/example/ckbrowse
Description: terminal record browser for CloudKit Web Services
 Browse zones, change feeds, records and subscriptions of a CloudKit container
 from a terminal, stage edits and commit them atomically, and run a local
 CloudKit-compatible server (ckbrowse serve) for development and tests.
CTL
dpkg-deb --root-owner-group -Zxz --build "$PKG" dist/ >/dev/null
DEB=$(ls dist/ckbrowse_${VERSION}_${ARCH}.deb)
echo "    $DEB: Depends: $DEPS"
dpkg-deb -c "$DEB" > "$ROOT/tmp/contents.txt"
check "the package's contents" "grep -q './usr/share/man/man1/ckbrowse.1.gz' \"$ROOT/tmp/contents.txt\" && grep -q './usr/share/bash-completion/completions/ckbrowse' \"$ROOT/tmp/contents.txt\""
if [ $INSTALL_TEST = 1 ]; then
    $SUDO apt-get install -y -qq "./$DEB" >/dev/null 2>&1
    check "apt-get install ./$(basename "$DEB")" "dpkg -s ckbrowse 2>/dev/null | grep -q 'Status: install ok installed'"
    check "the installed ckbrowse runs" "/usr/bin/ckbrowse --version | grep -q \"$VERSION\""
    check "man ckbrowse finds the page" "man -w ckbrowse 2>/dev/null | grep -q ckbrowse.1.gz || [ -f /usr/share/man/man1/ckbrowse.1.gz ]"
    FILES=$(dpkg -L ckbrowse | while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done)
    $SUDO apt-get remove -y -qq ckbrowse >/dev/null 2>&1
    LEFT=$(for f in $FILES; do if [ -e "$f" ]; then echo "$f"; fi; done)
    check "apt-get remove leaves none of its files" "[ -z \"$LEFT\" ] && ! dpkg -s ckbrowse >/dev/null 2>&1"
fi

echo "== figures"
python3 - "$SIZE" "$COLD" "$WARM" "$(stat -c %s "$DEB")" <<'PY'
import sys
size, cold, warm, deb = (int(x) for x in sys.argv[1:])
print(f"binary: {size / 1e6:.1f} MB stripped, static Swift runtime; package: {deb / 1e6:.1f} MB (xz)")
print(f"first frame of the demo browser: {warm} ms (warm), {cold} ms on a first start (seeds the demo container)")
PY
exit $fail
