#!/usr/bin/env bash
# Installs the system packages ckbrowse needs to build, test and run, when they are missing.
# Debian/Ubuntu: apt-get (with sudo when not root). macOS: Homebrew. Idempotent and quiet when all is there.
set -euo pipefail

# chromium: the CORS test loads a page in a real (headless) browser.
DEBIAN_PACKAGES=(libncursesw5-dev libsqlite3-dev tmux ncurses-term python3 pkg-config curl chromium)
BREW_PACKAGES=(ncurses sqlite tmux python3 pkg-config curl)

need_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        echo "error: the Swift toolchain (6.0 or newer) is not on PATH." >&2
        echo "       Install it from https://www.swift.org/install/ (Linux) or with Xcode (macOS), then re-run." >&2
        exit 1
    fi
}

case "$(uname -s)" in
Linux)
    if command -v dpkg-query >/dev/null 2>&1; then
        missing=()
        for p in "${DEBIAN_PACKAGES[@]}"; do
            dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
        done
        if ((${#missing[@]})); then
            echo "installing system packages: ${missing[*]}" >&2
            SUDO=""
            if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
            export DEBIAN_FRONTEND=noninteractive
            $SUDO apt-get update -qq
            $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
        fi
    else
        echo "warning: not a Debian-like system; make sure ncursesw, sqlite3 (dev headers), tmux and python3 are installed" >&2
    fi
    ;;
Darwin)
    if command -v brew >/dev/null 2>&1; then
        for p in "${BREW_PACKAGES[@]}"; do
            brew list --versions "$p" >/dev/null 2>&1 || brew install "$p"
        done
    else
        echo "warning: Homebrew not found; install ncurses, sqlite, tmux and python3 yourself" >&2
    fi
    ;;
esac
need_swift
