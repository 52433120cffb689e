#!/usr/bin/env python3
"""Closing a connection never cuts an answer in flight. A 4 MB records/changes page goes to a client
that has not read it yet (a small receive buffer keeps most of the page in the server's socket)
while the server closes the connection: because `ckbrowse serve` got SIGTERM (a graceful stop), or
because the request said `Connection: close`. The client then reads: it must get the whole answer,
exactly Content-Length bytes that parse as the full page; after SIGTERM the server must exit 0.
SIGTERM is tried with a page the answer cache holds (answered on the event loop, beside
Hummingbird's own connection bookkeeping) and with one computed for the request."""
import json, os, signal, socket, sys, time
from common import Client, Server, path, query

RECORDS = 200
FIELD_BYTES = 20_000


def seed(server):
    setup = Client(server.port)
    status, _ = setup.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Big"}}}]})
    assert status == 200, status
    text = "x" * FIELD_BYTES
    for start in range(0, RECORDS, 50):
        status, answer = setup.call("private", "records/modify", {"zoneID": {"zoneName": "Big"}, "operations": [
            {"operationType": "create", "record": {"recordName": f"r{k:03}", "recordType": "Blob", "fields": {"text": {"value": text}}}}
            for k in range(start, start + 50)]})
        assert status == 200, (status, answer)
    return setup


def read_answer(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return length, body


def run(cached, close_header=False, stalled=False):
    server = Server(extra=() if cached else ("--answer-cache-mb", "0"))
    server.start()
    try:
        setup = seed(server)
        request_body = json.dumps({"zoneID": {"zoneName": "Big"}, "resultsLimit": RECORDS}).encode()
        status, first = setup.call("private", "records/changes", json.loads(request_body))
        assert status == 200 and len(first["records"]) == RECORDS, status
        setup.conn.close()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.settimeout(30)
        target = path("private", "records/changes") + "?" + query()
        connection = "Connection: close\r\n" if close_header else ""
        sock.sendall(f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{connection}"
                     f"Content-Length: {len(request_body)}\r\n\r\n".encode() + request_body)
        time.sleep(0.5)  # the server has answered as far as the socket lets it
        if not close_header:
            server.proc.send_signal(signal.SIGTERM)
            if stalled:
                # A client that never reads holds the stop up for a bounded time only.
                started = time.time()
                try:
                    code = server.proc.wait(timeout=30)
                except Exception:
                    code = None
                waited = time.time() - started
                sock.close()
                print(f"SIGTERM, client never reads: serve exited with {code} after {waited:.1f} s (at most 10 s of waiting)")
                return code == 0 and waited < 20
            time.sleep(0.5)  # and is stopping
        length, body = read_answer(sock)
        sock.close()
        page = None
        try:
            page = json.loads(body)
        except ValueError:
            pass
        whole = length is not None and len(body) == length and page is not None and len(page["records"]) == RECORDS
        label = ("Connection: close, " if close_header else "SIGTERM, ") + ("cached page" if cached else "computed page")
        if close_header:
            print(f"{label}: answer of {length} bytes, received {len(body)}, {'whole' if whole else 'CUT'}")
            return whole
        try:
            code = server.proc.wait(timeout=15)
        except Exception:
            code = None
        print(f"{label}: answer of {length} bytes, received {len(body)}, {'whole' if whole else 'CUT'}; serve exited with {code}")
        return whole and code == 0
    finally:
        server.kill()


ok = all([run(cached=True), run(cached=False), run(cached=True, close_header=True), run(cached=True, stalled=True)])
print("shutdown: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
