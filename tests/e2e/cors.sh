#!/usr/bin/env bash
# End-to-end: CORS in a real browser. Debian's chromium, headless, loads a page from a second local
# origin (python3 -m http.server) whose script calls `ckbrowse serve` the way CloudKit JS does: the API
# token and the web auth token in the query, JSON bodies (so the browser sends a preflight first), the
# rotated token read from the exposed response header. It lists zones, reads a zone's records and
# writes one; curl then checks the server has it. A server that allows only another origin is
# refused by the browser itself. Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
E2E_NAME=cors
source tests/e2e/lib.sh

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    if [ "$(uname -s)" = Linux ]; then echo "  FAIL chromium is not installed (scripts/install-deps.sh installs it)"; echo "0 passed, 1 failed"; exit 1; fi
    echo "  skip: no chromium here (the CORS browser test runs on Linux CI)"; echo "0 passed, 0 failed"; exit 0
fi

# page SERVER_URL: the page, with the server it calls.
page() {
    cat <<HTML
<!doctype html><html><body><pre id="out">running</pre><script>
const out = [];
const base = '$1/database/1/iCloud.com.example.Gallery/development/private';
let token = 'ckbrowse-demo-web-auth-token';
function call(path, body) {
  const x = new XMLHttpRequest();
  x.open(body ? 'POST' : 'GET', base + path + '?ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=' + encodeURIComponent(token), false);
  if (body) x.setRequestHeader('Content-Type', 'application/json');
  x.send(body ? JSON.stringify(body) : null);
  const rotated = x.getResponseHeader('X-Apple-CloudKit-Web-Auth-Token');
  if (rotated && rotated !== token) { token = rotated; out.push('token rotated'); }
  return [x.status, JSON.parse(x.responseText)];
}
try {
  const [s1, zones] = call('/zones/list');
  out.push('zones ' + s1 + ' ' + zones.zones.map(z => z.zoneID.zoneName).join(','));
  const [s2, changes] = call('/changes/zone', {zones: [{zoneID: {zoneName: 'Drafts'}}]});
  out.push('read ' + s2 + ' ' + changes.zones[0].records.length + ' records');
  const [s3, saved] = call('/records/modify', {zoneID: {zoneName: 'Drafts'}, operations: [{operationType: 'create',
    record: {recordName: 'from-the-browser', recordType: 'Note', fields: {text: {value: 'written by chromium'}}}}]});
  out.push('wrote ' + s3 + ' ' + saved.records[0].recordName);
} catch (e) { out.push('blocked ' + e.name); }
document.getElementById('out').textContent = out.join('\\n');
</script></body></html>
HTML
}

start_demo_serve
mkdir -p "$WORK/site"
PAGE_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$WORK/site" && exec python3 -m http.server "$PAGE_PORT" --bind 127.0.0.1) > "$WORK/site.log" 2>&1 &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$PAGE_PORT/" && break; sleep 0.1; done
ORIGIN="http://127.0.0.1:$PAGE_PORT"
# The page's origin differs from the server's (another port): every call is cross-origin.
page "$URL" > "$WORK/site/page.html"
dom=$(timeout 90 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chromium" \
    --dump-dom "$ORIGIN/page.html" 2>/dev/null)
python3 -c 'import re, sys; m = re.search(r"<pre id=\"out\">(.*?)</pre>", sys.stdin.read(), re.S); print("\n".join("    page: " + l for l in (m.group(1) if m else "no output").splitlines()))' <<< "$dom"
grep -q "zones 200 _defaultZone" <<< "$dom" && ok "a page from another origin lists zones (GET, API and web auth tokens in the query)" || bad "zones: $dom"
grep -q "token rotated" <<< "$dom" && ok "it reads the rotated web auth token from the exposed header" || bad "no rotated token readable"
grep -q "read 200 25 records" <<< "$dom" && ok "it reads a zone's records (a JSON POST: the browser sent a preflight)" || bad "read: $dom"
grep -q "wrote 200 from-the-browser" <<< "$dom" && ok "it writes a record" || bad "write: $dom"
answer=$(curl -s -X POST "$DB/records/lookup?$API" -d '{"zoneID":{"zoneName":"Drafts"},"records":[{"recordName":"from-the-browser"}]}')
grep -q '"written by chromium"' <<< "$answer" && ok "the server has the record the page wrote" || bad "lookup: $answer"

# Sign-in as a person does it, in the same browser: the page's form clicked, its POST's Origin as the
# browser sends it (the page's Referrer-Policy decides it), the callback reached with a token that works.
signin=$(timeout 120 python3 tests/e2e/browser_signin.py "$CHROMIUM" "$URL" iCloud.com.example.Gallery demo "$ORIGIN/back" \
    ckbrowse-demo-api-token "$WORK" 2>&1)
sed 's/^/    /' <<< "$signin"
grep -qx "origin: $URL" <<< "$signin" && ok "the sign-in form's POST carries the server's own origin" || bad "sign-in POST origin: $signin"
grep -qx "landed: callback" <<< "$signin" && ok "the browser reaches the callback after signing in" || bad "sign-in: $signin"
grep -qx "token: zones/list 200" <<< "$signin" && ok "the token the callback received works" || bad "sign-in token: $signin"

# A server that allows another origin only: the browser refuses to send.
kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null
"$BIN" serve --data "$WORK/data" --port 0 --seed demo --allow-origin http://elsewhere.example > "$WORK/serve2.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/serve2.log" && break; sleep 0.1; done
URL2=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/serve2.log" | head -1)
page "$URL2" > "$WORK/site/page.html"
dom=$(timeout 90 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chromium" \
    --dump-dom "$ORIGIN/page.html" 2>/dev/null)
grep -q "blocked NetworkError" <<< "$dom" && ok "an origin not in --allow-origin is blocked by the browser" || bad "not blocked: $dom"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
