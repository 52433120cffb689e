#!/usr/bin/env python3
"""Slow and greedy clients against `ckbrowse serve` (issue 28, rows 6–8): what they cost the server.

    tests/reliability/greedy.py --figures        # the figures RELIABILITY.md quotes (~2 minutes)

Prints, for the binary in CKBROWSE_BIN (else the debug build):
- parked long-polls: the idle server's CPU and the p50 of a write with 1,000 parked
  `GET /webcourier/1/{token}` polls against none, and how soon the polls' descriptors are released
  after their clients close;
- greedy readers: the server's RSS while 20 clients ask for a 16 MB records/changes page (computed per
  request: no answer cache) and never read it, after the write timeout, and after they close;
- slowloris: how many of 300 connections trickling a head at 1 byte/s, and of 300 that send nothing,
  are closed within the header timeout;
- fd flood: a server limited to 256 descriptors (`ulimit -n` in the child) flooded with 600 idle
  connections: its CPU during the flood, and whether `/ready` answers during and after it.

Loopback only; every step bounded in count and time. The functions are shared with
tests/security/test_greedy.py, which runs smaller versions with pass/fail thresholds."""
import json, os, resource, select, socket, sys, time, urllib.parse
from common import CONTAINER, Client, Server, binary, path, percentile, query, wait_listening

TICKS = os.sysconf("SC_CLK_TCK")
# GREEDY_OLD_BINARY=1 leaves out the flags older binaries lack (--header-timeout, --write-timeout,
# --max-connections), to measure a binary from before them (their behaviour is then the defaults').
OLD_BINARY = os.environ.get("GREEDY_OLD_BINARY") == "1"


def new_flags(*flags):
    return () if OLD_BINARY else flags


def raise_fd_limit():
    """This process opens thousands of sockets: its soft descriptor limit goes up to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def cpu_share(pid, seconds):
    """The share of one core the process used over `seconds`."""
    t0, c0 = time.monotonic(), cpu_ticks(pid)
    time.sleep(seconds)
    return (cpu_ticks(pid) - c0) / TICKS / (time.monotonic() - t0)


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def wait_until(condition, timeout, step=0.05):
    """Polls `condition` until it holds or `timeout` passes; the seconds it took, or None."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(step)
    return None


def ready(port, timeout=2.0):
    """Whether `GET /ready` answers `{"ready":true}` within `timeout`."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return b'"ready":true' in data
    except OSError:
        return False


# Row 6: parked long-polls.

def create_tokens(port, count):
    client = Client(port)
    tokens = []
    for _ in range(count):
        status, body, _ = client.request(
            "POST", f"/device/1/{CONTAINER}/development/tokens/create?{query()}", {"apnsEnvironment": "development"})
        assert status == 200, (status, body)
        tokens.append(json.loads(body)["apnsToken"])
    if client.conn:
        client.conn.close()
    return tokens


def park(port, tokens):
    """One socket per token, each with a webcourier GET the server holds."""
    sockets = []
    for token in tokens:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(f"GET /webcourier/1/{urllib.parse.quote(token, safe='')} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        sockets.append(s)
    return sockets


def write_latencies(port, count):
    client = Client(port)
    times = []
    for k in range(count):
        body = {"operations": [{"operationType": "create", "record": {
            "recordName": f"w-{time.monotonic_ns()}-{k}", "recordType": "Note", "fields": {"n": {"value": k}}}}]}
        start = time.monotonic()
        status, answer = client.call("private", "records/modify", body)
        times.append((time.monotonic() - start) * 1000)
        assert status == 200, (status, answer)
    if client.conn:
        client.conn.close()
    return times


def parked_polls(polls, cpu_seconds=5.0, writes=50, extra=()):
    """{cpu, write_p50, fds_parked, release_seconds} with `polls` parked long-polls (0: none)."""
    server = Server(extra=("--hold-seconds", "600", *extra))
    server.start()
    pid = server.proc.pid
    try:
        write_latencies(server.port, 5)  # warm up
        tokens = create_tokens(server.port, polls)
        base = fd_count(pid)
        sockets = park(server.port, tokens)
        wait_until(lambda: fd_count(pid) >= base + polls, 30)
        time.sleep(1.0)
        # Reads may open more SQLite readers (the pool keeps them): the polls' release is measured
        # against the count just before their clients close.
        parked = fd_count(pid)
        figures = {"polls": polls, "fds_parked": parked - base}
        figures["cpu"] = cpu_share(pid, cpu_seconds)
        figures["write_p50"] = percentile(write_latencies(server.port, writes), 50)
        before_close = fd_count(pid)
        for s in sockets:
            s.close()
        left = lambda: fd_count(pid) - (before_close - polls)
        figures["release_seconds"] = wait_until(lambda: left() <= 2, 20) if polls else 0.0
        figures["fds_after"] = max(0, left())
        return figures
    finally:
        server.kill()


# Row 7: clients that never read a big page.

def seed_big_zone(port, records, field_bytes):
    client = Client(port)
    status, _ = client.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Big"}}}]})
    assert status == 200, status
    text = "x" * field_bytes
    for start in range(0, records, 25):
        status, answer = client.call("private", "records/modify", {"zoneID": {"zoneName": "Big"}, "operations": [
            {"operationType": "create", "record": {"recordName": f"r{k:04}", "recordType": "Blob", "fields": {"text": {"value": text}}}}
            for k in range(start, min(records, start + 25))]})
        assert status == 200, (status, str(answer)[:200])
    if client.conn:
        client.conn.close()


def greedy_readers(clients, records=200, field_bytes=80_000, write_timeout=5, extra=()):
    """RSS (MB) before, while `clients` never read a records/changes page, after the write timeout
    and after they close; and how many were cut off (their answer short of Content-Length)."""
    server = Server(extra=("--answer-cache-mb", "0", *new_flags("--write-timeout", str(write_timeout)), *extra))
    server.start()
    pid = server.proc.pid
    sockets = []
    try:
        seed_big_zone(server.port, records, field_bytes)
        body = json.dumps({"zoneID": {"zoneName": "Big"}, "resultsLimit": records}).encode()
        target = path("private", "records/changes") + "?" + query()
        request = (f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        # One page read in full first: its size, and the server's RSS once a page has been made.
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as s:
            s.sendall(request)
            length, got = read_answer(s)
        figures = {"clients": clients, "page_mb": length / 1e6, "rss_before": rss_mb(pid)}
        for _ in range(clients):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", server.port))
            s.sendall(request)
            sockets.append(s)
        # The pages are computed and handed to the sockets: RSS peaks, then holds while they wait.
        peak = figures["rss_before"]
        start = time.monotonic()
        while time.monotonic() - start < min(write_timeout, 4) + 1:
            peak = max(peak, rss_mb(pid))
            time.sleep(0.1)
        figures["rss_waiting"] = peak
        time.sleep(max(0, write_timeout + 2 - (time.monotonic() - start)))
        figures["rss_after_timeout"] = rss_mb(pid)
        cut = 0
        for s in sockets:
            s.settimeout(5)
            try:
                length_seen, got = read_answer(s)
                cut += length_seen is None or len(got) < length_seen
            except OSError:
                cut += 1
        figures["cut_off"] = cut
        for s in sockets:
            s.close()
        sockets = []
        time.sleep(1.0)
        figures["rss_after_close"] = rss_mb(pid)
        return figures
    finally:
        for s in sockets:
            s.close()
        server.kill()


def read_answer(sock):
    """(Content-Length, body) of one answer; (None, bytes) if the connection ended first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return None, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        body += chunk
    return length, body


# Row 8: slowloris and idle connections.

def slowloris(trickling, idle, header_timeout=2, watch=None, extra=()):
    """Seconds from its connect until the server closed each connection: `trickling` ones sending a
    head at 1 byte/s, `idle` ones sending nothing. Watched for `watch` seconds (default: 3 × the header timeout)."""
    server = Server(extra=(*new_flags("--header-timeout", str(header_timeout)), *extra))
    server.start()
    watch = watch or header_timeout * 3 + 2
    open_sockets = {}
    closed = {"trickling": [], "idle": []}
    try:
        start = time.monotonic()
        opened = {}
        for kind, count in (("trickling", trickling), ("idle", idle)):
            for _ in range(count):
                s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
                s.setblocking(False)
                open_sockets[s] = kind
                opened[s] = time.monotonic()
        for s, kind in open_sockets.items():
            if kind == "trickling":
                s.send(b"GET /ready HTTP/1.1\r\n")
        next_byte = time.monotonic() + 1
        while open_sockets and time.monotonic() - start < watch:
            readable, _, _ = select.select(list(open_sockets), [], [], 0.1)
            for s in readable:
                try:
                    gone = s.recv(4096) == b""
                except (ConnectionResetError, BlockingIOError):
                    gone = True
                if gone:
                    closed[open_sockets.pop(s)].append(time.monotonic() - opened[s])
                    s.close()
            if time.monotonic() >= next_byte:
                next_byte += 1
                for s, kind in list(open_sockets.items()):
                    if kind == "trickling":
                        try:
                            s.send(b"X")
                        except OSError:
                            closed[open_sockets.pop(s)].append(time.monotonic() - opened[s])
                            s.close()
        still = {"trickling": 0, "idle": 0}
        for kind in open_sockets.values():
            still[kind] += 1
        return {"closed": closed, "still_open": still, "watched": watch, "header_timeout": header_timeout}
    finally:
        for s in open_sockets:
            s.close()
        server.kill()


# Row 8: descriptor exhaustion.

class LimitedServer(Server):
    """`ckbrowse serve` started with a low descriptor limit (soft and hard), as `ulimit -n N` would."""

    def __init__(self, files, **kwargs):
        super().__init__(**kwargs)
        self.files = files

    def start(self, timeout=30):
        import subprocess
        args = [binary(), "serve", "--data", self.data, "--port", str(self.port), "--api-token", "greedy-token"]
        limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (self.files, self.files))
        self.proc = subprocess.Popen(args + self.extra, stdout=subprocess.PIPE, stderr=self.log, preexec_fn=limit)
        if not wait_listening(self.proc, timeout)[0]:
            raise RuntimeError("serve did not start")


def fd_flood(files=256, connections=600, hold=4.0, extra=()):
    """A server limited to `files` descriptors, flooded with idle connections: its CPU during the
    flood, whether /ready answered during it, and how soon after the flood /ready answers."""
    server = LimitedServer(files, extra=extra)
    server.start()
    pid = server.proc.pid
    flood = []
    try:
        for _ in range(connections):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", server.port))
            except BlockingIOError:
                pass
            flood.append(s)
        time.sleep(0.5)
        figures = {"files": files, "connections": connections, "fds_during": fd_count(pid)}
        figures["cpu_during"] = cpu_share(pid, hold)
        figures["ready_during"] = ready(server.port, timeout=2.0)
        for s in flood:
            s.close()
        flood = []
        figures["ready_after_seconds"] = wait_until(lambda: ready(server.port, timeout=1.0), 15, step=0.2)
        figures["cpu_after"] = cpu_share(pid, 2.0)
        return figures
    finally:
        for s in flood:
            s.close()
        server.kill()


def figures():
    raise_fd_limit()
    print(f"binary: {binary()}")
    none = parked_polls(0)
    many = parked_polls(1000)
    print(f"parked long-polls: idle CPU {none['cpu']:.2f} core with none, {many['cpu']:.2f} with {many['polls']:,}; "
          f"write p50 {none['write_p50']:.1f} ms with none, {many['write_p50']:.1f} ms with {many['polls']:,}; "
          f"{many['fds_parked']:,} fds while parked, released {fmt_seconds(many['release_seconds'])} after the clients closed "
          f"({many['fds_after']} left)")
    g = greedy_readers(20)
    print(f"greedy readers: {g['clients']} clients never read a {g['page_mb']:.1f} MB page: RSS {g['rss_before']:.0f} MB before, "
          f"{g['rss_waiting']:.0f} MB while they wait, {g['rss_after_timeout']:.0f} MB after the 5 s write timeout "
          f"({g['cut_off']} of {g['clients']} cut off), {g['rss_after_close']:.0f} MB after they close")
    s = slowloris(300, 300, header_timeout=2)
    for kind in ("trickling", "idle"):
        times = s["closed"][kind]
        within = sum(t <= s["header_timeout"] + 1 for t in times)
        print(f"slowloris ({kind}): {len(times) + s['still_open'][kind]} connections, {within} closed within the "
              f"{s['header_timeout']} s header timeout (+1 s), {s['still_open'][kind]} still open after {s['watched']} s"
              + (f"; closed after {min(times):.1f}–{max(times):.1f} s" if times else ""))
    f = fd_flood()
    print(f"fd flood: ulimit -n {f['files']}, {f['connections']} idle connections: CPU {f['cpu_during']:.2f} core during "
          f"({f['fds_during']} fds), /ready during: {'answered' if f['ready_during'] else 'no answer'}; "
          f"after: {'answered after ' + format(f['ready_after_seconds'], '.1f') + ' s' if f['ready_after_seconds'] is not None else 'no answer within 15 s'}; "
          f"CPU after {f['cpu_after']:.2f} core")


def fmt_seconds(value):
    return "not within 20 s" if value is None else f"{value:.1f} s"


if __name__ == "__main__":
    if "--figures" not in sys.argv[1:]:
        print(__doc__)
        sys.exit(2)
    figures()
