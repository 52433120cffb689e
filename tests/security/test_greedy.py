#!/usr/bin/env python3
"""Slow and greedy clients (issue 28, threat model rows 6–8), small versions of
tests/reliability/greedy.py with pass/fail thresholds, each generous for a loaded 2-core machine:

- row 6: 500 parked webcourier long-polls cost the idle server little CPU, and their descriptors are
  released soon after their clients close (not when --hold-seconds runs out);
- row 7: clients that never read a large page are cut off after the write timeout, and the server's
  RSS comes back down;
- row 8: connections trickling a head at 1 byte/s, and connections that send nothing, are closed
  within the header timeout; over the connection cap a request is refused with 503 TRY_AGAIN_LATER;
  a server out of descriptors does not spin, and `/ready` answers once the flood ends."""
import json, socket, time
from common import Checks, Server
import greedy

checks = Checks("greedy")
greedy.raise_fd_limit()

# Row 6. Today's courier woke every parked poll every 250 ms (0.85 of a core for 4,000 polls); a
# parked poll now costs nothing while it waits.
polls = greedy.parked_polls(500, cpu_seconds=4.0, writes=20)
checks.check(polls["fds_parked"] >= 490, "row 6: 500 long-polls are parked", f"{polls['fds_parked']} descriptors")
checks.check(polls["cpu"] < 0.03, "row 6: 500 parked long-polls cost the idle server under 0.03 of a core",
             f"{polls['cpu']:.3f} of a core")
checks.check(polls["release_seconds"] is not None and polls["release_seconds"] < 5,
             "row 6: the polls' descriptors are released within 5 s of their clients closing",
             f"{polls['fds_after']} still open after 20 s" if polls["release_seconds"] is None else f"{polls['release_seconds']:.1f} s")

# Row 7. 12 clients never read a ~8 MB computed page; the write timeout is 3 s.
readers = greedy.greedy_readers(12, records=100, field_bytes=80_000, write_timeout=3)
checks.check(readers["cut_off"] == 12, "row 7: every client that never reads is cut off after the write timeout",
             f"{readers['cut_off']} of 12 cut off")
grown = readers["rss_after_timeout"] - readers["rss_before"]
checks.check(grown < 40, "row 7: once they are cut off, the server's RSS is back within 40 MB of where it was",
             f"{readers['rss_before']:.0f} MB before, {readers['rss_waiting']:.0f} MB while waiting, "
             f"{readers['rss_after_timeout']:.0f} MB after the timeout, {readers['rss_after_close']:.0f} MB after close")

# Row 8: slowloris and silent connections, header timeout 2 s.
loris = greedy.slowloris(100, 100, header_timeout=2, watch=8)
for kind in ("trickling", "idle"):
    times = loris["closed"][kind]
    late = [t for t in times if t > 2 + 2.5]
    checks.check(loris["still_open"][kind] == 0 and not late,
                 f"row 8: 100 {kind} connections are closed within the 2 s header timeout (+2.5 s)",
                 f"{loris['still_open'][kind]} still open after 8 s, {len(late)} closed late")

# Row 8: the connection cap answers a clear refusal.
server = Server(extra=greedy.new_flags("--max-connections", "5"))
server.start()
try:
    held = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(5)]
    time.sleep(0.3)

    def over_cap(request):
        """What a connection over the cap is answered to `request`, up to its close: (head, body)."""
        answer = b""
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            s.settimeout(5)
            s.sendall(request)
            try:
                while chunk := s.recv(65536):
                    answer += chunk
            except OSError:
                pass  # not closed: no refusal
        head, _, body = answer.partition(b"\r\n\r\n")
        return head, body
    head, body = over_cap(b"GET /database/1/iCloud.x/development/public/zones/list HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try:
        error = json.loads(body)
    except ValueError:
        error = {}
    checks.check(head.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in head.lower()
                 and error.get("serverErrorCode") == "TRY_AGAIN_LATER" and error.get("retryAfter") == 1,
                 "row 8: over --max-connections a request is answered 503 TRY_AGAIN_LATER with Retry-After, then closed",
                 (head + b"\r\n\r\n" + body)[:200].decode(errors="replace"))
    checks.check(greedy.ready(server.port), "row 8: /ready still answers over the cap")
    # The full path's policy holds over the cap too: `/ready` is not told to a web page, to a foreign
    # Host or for another method, and no page gets CORS headers it would not get under the cap.
    for name, request in [
        ("a web page's Origin", b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n\r\n"),
        ("a foreign Host (DNS rebinding)", b"GET /ready HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
        ("a POST", b"POST /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"),
    ]:
        head, body = over_cap(request)
        checks.check(head.startswith(b"HTTP/1.1 503") and b"ready" not in body
                     and b"access-control-allow-origin" not in head.lower(),
                     f"row 8: over the cap, /ready with {name} is the 503, without CORS headers",
                     (head + b" | " + body)[:300].decode(errors="replace"))
    head, _ = over_cap(b"GET /database/1/iCloud.x/development/public/zones/list HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Origin: http://localhost:3000\r\n\r\n")
    checks.check(head.startswith(b"HTTP/1.1 503") and b"access-control-allow-origin: http://localhost:3000" in head.lower(),
                 "row 8: over the cap, a page the policy allows (a loopback origin) can read the 503",
                 head[:300].decode(errors="replace"))
    for s in held:
        s.close()
finally:
    server.kill()

# Row 8: out of descriptors (ulimit -n 256, 600 connections).
flood = greedy.fd_flood(files=256, connections=600, hold=3.0)
checks.check(flood["cpu_during"] < 0.5, "row 8: a server out of descriptors does not spin (under half a core)",
             f"{flood['cpu_during']:.2f} of a core")
checks.check(flood["ready_after_seconds"] is not None and flood["ready_after_seconds"] < 5,
             "row 8: /ready answers within 5 s of the flood's end",
             "no answer within 15 s" if flood["ready_after_seconds"] is None else f"{flood['ready_after_seconds']:.1f} s")

checks.done()
