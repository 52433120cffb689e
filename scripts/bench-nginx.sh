#!/usr/bin/env bash
# Issue 8's serving figure: `ckbrowse serve` answering records/changes pages of 200 records over
# loopback, against nginx serving the same response bytes as a static file, all driven by wrk in the
# same run. `serve` is measured twice: as it runs by default (wrk repeats one request, so after the
# first one the answer cache answers), and with --answer-cache-mb 0 (every request reads SQLite and
# encodes the page, as a client paging forward sees it). Installs nginx-light and wrk from Debian if
# missing. Prints the rates and the ratios.
# Usage: scripts/bench-nginx.sh [SECONDS] [CONNECTIONS] [RUNS]   (build with `make release` first for real
# figures; defaults 10 s, 4 connections, 3 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-10}; CONNECTIONS=${2:-4}; RUNS=${3:-3}
if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    # A new machine may have no package lists yet.
    $SUDO apt-get install -y -qq nginx-light wrk >/dev/null 2>&1 || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq nginx-light wrk >/dev/null; }
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
BIN=${CKBROWSE_BIN:-$(swift build -c release --show-bin-path)/ckbrowse}
[ -x "$BIN" ] || BIN=$(swift build --show-bin-path)/ckbrowse
echo "server: $BIN"
WORK=$(mktemp -d)
trap '[ -n "${SPID:-}" ] && kill $SPID 2>/dev/null; [ -n "${UPID:-}" ] && kill $UPID 2>/dev/null; [ -f $WORK/nginx.pid ] && kill $(cat $WORK/nginx.pid) 2>/dev/null; rm -rf $WORK' EXIT
"$BIN" serve --data "$WORK/data" --port 0 --seed demo > "$WORK/serve.log" 2>&1 & SPID=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/serve.log" && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/serve.log" | head -1)
# The same data, served without the answer cache.
"$BIN" serve --data "$WORK/data" --port 0 --seed demo --answer-cache-mb 0 > "$WORK/uncached.log" 2>&1 & UPID=$!
for _ in $(seq 1 300); do grep -q "listening on" "$WORK/uncached.log" && break; sleep 0.1; done
UURL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/uncached.log" | head -1)
Q="ckAPIToken=ckbrowse-demo-api-token&ckWebAuthToken=ckbrowse-demo-web-auth-token"
P="/database/1/iCloud.com.example.Gallery/development/private/records/changes"
BODY='{"zoneID":{"zoneName":"Gallery"},"resultsLimit":200}'
curl -s -X POST "$URL$P?$Q" -d "$BODY" > "$WORK/page.json"
BYTES=$(wc -c < "$WORK/page.json")
RECORDS=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["records"]))' "$WORK/page.json")
mkdir -p "$WORK/www" && cp "$WORK/page.json" "$WORK/www/page.json"
# Run as root, nginx's workers run as nobody: mktemp's 0700 directory would answer every request with a
# 153-byte 403 (which is what this script measured until 2026-11-23). Let them read the page.
chmod 755 "$WORK" "$WORK/www" && chmod 644 "$WORK/www/page.json"
NPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/tmp; proxy_temp_path $WORK/tmp; fastcgi_temp_path $WORK/tmp; uwsgi_temp_path $WORK/tmp; scgi_temp_path $WORK/tmp;
  server { listen 127.0.0.1:$NPORT; root $WORK/www; location / { default_type application/json; } }
}
CONF
mkdir -p "$WORK/tmp"
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK"
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$NPORT/" && break; sleep 0.1; done
curl -s "http://127.0.0.1:$NPORT/page.json" | cmp -s - "$WORK/page.json" || { echo "nginx does not serve the page's bytes" >&2; exit 1; }
QP="/database/1/iCloud.com.example.Gallery/development/private/records/query"
QBODY='{"zoneID":{"zoneName":"Gallery"},"query":{"recordType":"Artwork","sortBy":[{"systemFieldName":"createdTimestamp"}]},"resultsLimit":200}'
QRECORDS=$(curl -s -X POST "$UURL$QP?$Q" -d "$QBODY" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["records"]))')
cat > "$WORK/query.lua" <<LUA
wrk.method = "POST"
wrk.body = '$QBODY'
wrk.headers["Content-Type"] = "application/json"
LUA
cat > "$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
LUA
# Every response must be a 200 with the page: wrk counts errors in its rate, so a run with any non-2xx
# answer is refused rather than reported.
rate() { local out; out=$(cat); if grep -q "Non-2xx\|Socket errors" <<<"$out"; then echo "$out" >&2; echo "wrk saw failed responses" >&2; exit 1; fi; awk '/Requests\/sec/ { r = $2 } / requests in / { n = $1 } END { print r, n }' <<<"$out"; }
# CPU time (user + system, clock ticks) a server process has used: with the count of responses it gives
# the CPU each response cost, a figure that moves less than a rate on a shared machine.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
measure() { # PID URL [wrk args...] -> "rate responses ticks"
    local pid=$1 url=$2; shift 2; local t0 out; t0=$(ticks "$pid")
    out=$(wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" "$@" "$url" | rate)
    echo "$out $(( $(ticks "$pid") - t0 ))"
}
NWORKER=$(pgrep -P "$(cat "$WORK/nginx.pid")" | head -1)
echo "query page: $QRECORDS records"
echo "same response: $BYTES bytes, $RECORDS records; wrk, $CONNECTIONS connections, ${SECONDS_PER_RUN} s each, 1 thread, $RUNS runs"
# The three servers take turns within each run, so a noisy minute on this shared machine hits them
# alike; the ratios are compared per run and their median is the figure.
FIGURES=()
for run in $(seq 1 "$RUNS"); do
    N=$(measure "$NWORKER" "http://127.0.0.1:$NPORT/page.json")
    S=$(measure "$SPID" "$URL$P?$Q" -s "$WORK/post.lua")
    U=$(measure "$UPID" "$UURL$P?$Q" -s "$WORK/post.lua")
    R=$(measure "$UPID" "$UURL$QP?$Q" -s "$WORK/query.lua")
    FIGURES+=("$N $S $U $R")
done
# An asset's download URL carries its expiry, rounded to 30 minutes (Assets.swift, downloadURLBucket): a
# run that crosses such a boundary gets new URLs, and the pages are compared without the tokens.
untokened() { sed -E 's#/assets/1/[^"]*/\$\{f\}#/assets/1/TOKEN/${f}#g'; }
untokened < "$WORK/page.json" > "$WORK/page-untokened.json"
curl -s -X POST "$URL$P?$Q" -d "$BODY" | untokened | cmp -s - "$WORK/page-untokened.json" || { echo "the cached answer differs from the first one" >&2; exit 1; }
# The second server's asset download URLs name its own address: the same page otherwise.
curl -s -X POST "$UURL$P?$Q" -d "$BODY" | sed "s#$UURL/#$URL/#g" | untokened | cmp -s - "$WORK/page-untokened.json" || { echo "the uncached answer differs from the first one" >&2; exit 1; }
python3 - "$(getconf CLK_TCK)" "${FIGURES[@]}" <<'PY'
import statistics, sys
hz = float(sys.argv[1])
cpu = lambda ticks, count: f"{ticks / hz * 1e6 / count:7.1f} µs CPU each"
cached, computed, queried = [], [], []
for i, line in enumerate(sys.argv[2:], 1):
    v = line.split()
    (n, nn, nt), (s, sn, st), (u, un, ut), (q, qn, qt) = [(float(v[k]), int(v[k + 1]), int(v[k + 2])) for k in (0, 3, 6, 9)]
    print(f"run {i}:")
    print(f"  nginx static file:                     {n:10.1f} responses/s  {cpu(nt, nn)} (its worker)")
    print(f"  ckbrowse serve, repeated request:      {s:10.1f} pages/s      {cpu(st, sn)} (answer cache)")
    print(f"  ckbrowse serve, --answer-cache-mb 0:   {u:10.1f} pages/s      {cpu(ut, un)} (every page read and encoded)")
    print(f"  ckbrowse serve, records/query, uncached: {q:7.1f} pages/s      {cpu(qt, qn)} (first page of Artwork by createdTimestamp)")
    print(f"  serve / nginx: {s / n:.3f} cached, {u / n:.3f} uncached, {q / n:.3f} query")
    cached.append(s / n)
    computed.append(u / n)
    queried.append(q / n)
print(f"serve / nginx, median of {len(cached)} runs: {statistics.median(cached):.3f} cached (budget 0.9), "
      f"{statistics.median(computed):.3f} uncached (budget 0.5), {statistics.median(queried):.3f} query pages (budget 0.25)")
PY
