#!/usr/bin/env bash
# Writes the man page (docs/man/ckbrowse.1) from the commands' own help, with swift-argument-parser's
# generate-manual plugin, and the bash/zsh/fish completion scripts (docs/completions/).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/man docs/completions
swift package --disable-sandbox --allow-writing-to-package-directory generate-manual --output-directory docs/man >/dev/null 2>&1
BIN=$(swift build --show-bin-path)/ckbrowse
for shell in bash zsh fish; do "$BIN" --generate-completion-script "$shell" > "docs/completions/ckbrowse.$shell"; done
ls docs/man docs/completions
