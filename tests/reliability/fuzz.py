#!/usr/bin/env python3
"""Hostile input for `ckbrowse serve`: a seeded generator of mutated requests (truncated and invalid
JSON, wrong types, huge numbers, deep nesting, 10 MB bodies, invalid UTF-8, unknown keys, absurd
resultsLimit, forged tokens and signatures, odd paths and methods). Every answer must come within the
timeout, with a status from the reference, and every non-200 answer must be an error dictionary
(serverErrorCode + reason; a failed atomic batch: one per record). Prints the figures; exits 1 on any crash, hang or malformed answer."""
import json, random, sys, time, urllib.parse
from common import API_TOKEN, CONTAINER, USERS, Client, Server, path, query

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 11)
ALLOWED = {200, 400, 401, 403, 404, 405, 409, 412, 413, 421, 429, 503}

server = Server()
server.start()
client = Client(server.port, timeout=15)
client.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "F"}}}]})
client.call("private", "records/modify", {"zoneID": {"zoneName": "F"}, "operations": [
    {"operationType": "create", "record": {"recordName": f"r{i}", "recordType": "T", "fields": {"n": {"value": i, "type": "INT64"}}}} for i in range(20)]})

SEEDS = [
    ("private", "records/modify", {"zoneID": {"zoneName": "F"}, "atomic": True, "operations": [
        {"operationType": "update", "record": {"recordName": "r1", "recordChangeTag": "x", "fields": {"n": {"value": 5, "type": "INT64"}}}},
        {"operationType": "create", "record": {"recordType": "T", "fields": {"s": {"value": "hi", "type": "STRING"}, "l": {"value": [1, 2], "type": "INT64_LIST"}}}}]}),
    ("private", "records/query", {"zoneID": {"zoneName": "F"}, "resultsLimit": 10, "query": {"recordType": "T",
        "filterBy": [{"fieldName": "n", "comparator": "GREATER_THAN", "fieldValue": {"value": 3, "type": "INT64"}}],
        "sortBy": [{"fieldName": "n", "ascending": False}]}}),
    ("private", "records/lookup", {"zoneID": {"zoneName": "F"}, "records": [{"recordName": "r2"}, {"recordName": "nope"}], "desiredKeys": ["n"]}),
    ("private", "records/changes", {"zoneID": {"zoneName": "F"}, "resultsLimit": 5}),
    ("private", "changes/database", {"resultsLimit": 5}),
    ("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "F"}}]}),
    ("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "G"}}}]}),
    ("private", "zones/lookup", {"zones": [{"zoneName": "F"}]}),
    ("private", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": {"subscriptionID": "s", "subscriptionType": "query",
        "query": {"recordType": "T"}, "firesOn": ["create"], "notificationInfo": {"alertBody": "x", "additionalFields": ["n"]}}}]}),
    ("public", "records/query", {"query": {"recordType": "T"}}),
]
VALUES = [None, True, False, 0, -1, 1e308, 10 ** 30, -(10 ** 30), "", "x" * 1000, [], {}, [None], {"value": None}, "\u0000", "💥", 3.5, "NaN"]


def mutate_json(value, depth=0):
    """One random structural change somewhere in the value."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        value = dict(value)
        choice = rng.random()
        if choice < 0.5:
            value[key] = mutate_json(value[key], depth + 1)
        elif choice < 0.7:
            value[key] = rng.choice(VALUES)
        elif choice < 0.85:
            del value[key]
        else:
            value["unknownKey" + str(rng.randint(0, 9))] = rng.choice(VALUES)
        return value
    if isinstance(value, list) and value and rng.random() < 0.7:
        value = list(value)
        i = rng.randrange(len(value))
        if rng.random() < 0.6:
            value[i] = mutate_json(value[i], depth + 1)
        else:
            value.append(rng.choice(VALUES))
        return value
    return rng.choice(VALUES)


def nested(depth):
    return ("[" * depth + "]" * depth).encode() if rng.random() < 0.5 else ('{"a":' * depth + "1" + "}" * depth).encode()


def request():
    db, op, body = rng.choice(SEEDS)
    url = path(db, op)
    q = query("alice")
    headers = {"Content-Type": "application/json"}
    method = "POST"
    kind = rng.random()
    data = json.dumps(body).encode()
    if kind < 0.30:
        data = json.dumps(mutate_json(body)).encode()
        label = "wrong types / unknown keys"
    elif kind < 0.40:
        data = data[: rng.randrange(len(data))]
        label = "truncated JSON"
    elif kind < 0.48:
        b = bytearray(data)
        for _ in range(rng.randint(1, 5)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        data = bytes(b)
        label = "random bytes / invalid UTF-8"
    elif kind < 0.52:
        data = data.replace(b'"F"', b'"\xff\xfe"', 1) if rng.random() < 0.5 else b'{"zoneID": {"zoneName": "\xc3\x28"}}'
        label = "invalid UTF-8"
    elif kind < 0.56:
        data = nested(rng.choice([100, 1000, 100000]))
        label = "deep nesting"
    elif kind < 0.60:
        text = data.decode()
        data = text.replace("5", rng.choice(["1e400", "-1e400", "123456789012345678901234567890", "0.1e-400", "9223372036854775808"]), 1).encode()
        label = "huge numbers"
    elif kind < 0.64:
        if "resultsLimit" in body:
            b = dict(body)
            b["resultsLimit"] = rng.choice([-1, 0, 201, 10 ** 9, "200", 1.5, None])
            data = json.dumps(b).encode()
        label = "absurd resultsLimit"
    elif kind < 0.72:
        q = rng.choice([
            query("random-" + str(rng.random())),
            urllib.parse.urlencode({"ckAPIToken": "forged-" + str(rng.random()), "ckWebAuthToken": USERS["alice"]}),
            urllib.parse.urlencode({"ckAPIToken": API_TOKEN, "ckWebAuthToken": "w1\u001falice\u001fsession\u001fnonce\u001fforgedmac"}),
            "",
            urllib.parse.urlencode({"ckAPIToken": API_TOKEN, "ckSession": "x" * 5000}),
        ])
        label = "forged tokens"
    elif kind < 0.76:
        headers.update({"X-Apple-CloudKit-Request-KeyID": "forged", "X-Apple-CloudKit-Request-ISO8601Date": "2026-11-22T00:00:00Z",
                        "X-Apple-CloudKit-Request-SignatureV1": rng.choice(["", "AAAA", "%%%", "MEUCIQ" + "A" * 90])})
        label = "forged signatures"
    elif kind < 0.84:
        url = rng.choice([
            "/database/1/" + CONTAINER + "/staging/private/records/query",
            "/database/1/" + CONTAINER + "/development/everyone/records/query",
            "/database/2/x/y/z/w",
            "/database/1/%ZZ/development/private/records/query",
            "/database/1/" + CONTAINER + "/development/private/records/../zones/list",
            "/database/1/" + "c" * 5000 + "/development/private/zones/list",
            "/device/1/" + CONTAINER + "/development/tokens/create",
            "/device/1/" + CONTAINER + "/development/tokens/register",
            "/webcourier/1/" + "nope",
            "/",
            "/database/1/" + CONTAINER + "/development/private/zones/list",
        ])
        method = rng.choice(["GET", "POST", "PUT", "DELETE", "PATCH"])
        label = "odd paths and methods"
    elif kind < 0.96:
        data = json.dumps(mutate_json(mutate_json(body))).encode()
        label = "two mutations"
    else:
        data = b""
        label = "empty body"
    return method, url + ("?" + q if q else ""), data, headers, label


def big():
    filler = "x" * (10 * 1024 * 1024)
    body = {"zoneID": {"zoneName": "F"}, "operations": [{"operationType": "create", "record": {"recordName": "big", "recordType": "T",
            "fields": {"s": {"value": filler, "type": "STRING"}}}}]}
    return "POST", path("private", "records/modify") + "?" + query("alice"), json.dumps(body).encode(), {}, "10 MB body"


stats = {"requests": 0, "crashes": 0, "hangs": 0, "bad_status": 0, "not_error_dict": 0, "ok_200": 0, "errors": 0, "internal": 0}
labels = {}
problems = []
started = time.time()
for i in range(COUNT):
    method, url, data, headers, label = big() if i % 2000 == 1999 else request()
    labels[label] = labels.get(label, 0) + 1
    stats["requests"] += 1
    try:
        status, body, _ = client.request(method, url, data, headers)
    except Exception as error:
        if server.proc.poll() is not None:
            stats["crashes"] += 1
            problems.append(f"crash on {label}: {url[:80]}")
            server.start()
        else:
            stats["hangs"] += 1
            problems.append(f"no answer ({type(error).__name__}) on {label}: {url[:80]}")
        continue
    if status not in ALLOWED:
        stats["bad_status"] += 1
        if status == 500:
            stats["internal"] += 1
        problems.append(f"status {status} on {label}: {body[:200]!r}")
        continue
    if status == 200:
        stats["ok_200"] += 1
        continue
    stats["errors"] += 1
    try:
        answer = json.loads(body)
        assert isinstance(answer, dict)
        if status == 400 and isinstance(answer.get("records"), list):
            # An atomic batch that failed: per-record error dictionaries (the reference's §4.1 shape).
            items = answer["records"]
            assert items and all(isinstance(r.get("serverErrorCode"), str) and isinstance(r.get("reason"), str) for r in items)
        else:
            assert isinstance(answer.get("serverErrorCode"), str) and isinstance(answer.get("reason"), str)
    except Exception:
        stats["not_error_dict"] += 1
        problems.append(f"status {status} without an error dictionary on {label}: {body[:200]!r}")
elapsed = time.time() - started
alive = server.proc.poll() is None
server.stop()
print(f"fuzz: {stats['requests']} requests in {elapsed:.1f} s (seeded), server alive at the end: {alive}")
print("fuzz: kinds " + ", ".join(f"{k} {v}" for k, v in sorted(labels.items())))
print(f"fuzz: 200 {stats['ok_200']}, error dictionaries {stats['errors']}; crashes {stats['crashes']}, hangs {stats['hangs']}, "
      f"statuses outside the reference {stats['bad_status']} (500s {stats['internal']}), non-200 without an error dictionary {stats['not_error_dict']}")
for p in problems[:15]:
    print("  " + p)
ok = alive and not problems
print("fuzz: PASS" if ok else "fuzz: FAIL")
sys.exit(0 if ok else 1)
