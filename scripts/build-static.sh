#!/usr/bin/env bash
# Builds the release binary with the Swift runtime linked in statically, into
# .build-static/release/ckbrowse (not stripped; scripts/package.sh strips its copy).
# Used by scripts/package.sh and scripts/bench-callgrind.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
# libstdc++ and zlib (the Swift runtime's and AsyncHTTPClient's) are linked in statically too: a
# folder holding only their static archives comes first on the library path, so the linker picks
# them over the shared ones. What is left are the system's libc, ncursesw and SQLite, and libgcc_s:
# glibc loads it whenever a thread exits (pthread_exit, which Dispatch's main loop calls), even in a
# binary linked with -static-libgcc, so it stays a shared library; Debian's libc6 depends on it.
STATIC_LIBS=.build-static/staticlibs
mkdir -p "$STATIC_LIBS"
for a in "$(gcc -print-file-name=libstdc++.a 2>/dev/null || true)" /usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libz.a; do
    if [ ! -f "$a" ]; then $SUDO apt-get install -y -qq libstdc++-12-dev zlib1g-dev >/dev/null; fi
done
ln -sf "$(gcc -print-file-name=libstdc++.a)" "$STATIC_LIBS/libstdc++.a"
ln -sf "/usr/lib/$(gcc -print-multiarch)/libz.a" "$STATIC_LIBS/libz.a"
swift build -c release --static-swift-stdlib --scratch-path .build-static --product ckbrowse \
    -Xlinker -L"$PWD/$STATIC_LIBS" 2>&1 \
    | grep -E "error|warning: unre|Compiling ckbrowse|Build complete" || true
test -x .build-static/release/ckbrowse
