#!/usr/bin/env bash
# The security tests (issue 28, SERVER.md "Threat model"): every attack row of the threat model tried
# against the real binary (`ckbrowse serve` on loopback, the command line on a terminal). Each file
# here is one group of rows; each prints `ok …` / `FAIL …` lines and exits non-zero on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
export CKBROWSE_BIN=${CKBROWSE_BIN:-$(swift build --show-bin-path)/ckbrowse}
[ -x "$CKBROWSE_BIN" ] || swift build --product ckbrowse >/dev/null
status=0
passed=0
failed=0
for t in tests/security/test_*.py tests/security/test_*.sh; do
    [ -e "$t" ] || continue
    echo "== $(basename "$t")"
    case "$t" in
    *.py) (cd tests/security && timeout 900 python3 "$(basename "$t")") ;;
    *.sh) timeout 900 "$t" ;;
    esac
    if [ $? -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
done
echo "security: $passed passed, $failed failed"
exit $status
