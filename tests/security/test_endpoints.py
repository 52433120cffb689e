"""The endpoint walk (issue 28): SERVER.md's endpoint table is the code's (`serve --endpoints`), and
every endpoint in it, called by every kind of caller it must refuse, refuses: no credential, an API
token of another container, another user, a participant whose share was revoked, a user without the
READ grant, and a web page from an origin the endpoint does not take. Against the real server."""
import json, os, re, subprocess, sys, urllib.parse

from common import Checks, binary
from fixture import ALICE, API, BOB, C, Serve, schema_file, work

checks = Checks("endpoints")

# ---------------------------------------------------------------- the table is the code's
markdown = subprocess.run([binary(), "serve", "--endpoints", "markdown"], capture_output=True, text=True, check=True).stdout.strip()
table = json.loads(subprocess.run([binary(), "serve", "--endpoints", "json"], capture_output=True, text=True, check=True).stdout)
doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "SERVER.md")).read()
between = re.search(r"<!-- endpoints:begin -->\n(.*?)\n<!-- endpoints:end -->", doc, re.S)
checks.check(between is not None and between.group(1).strip() == markdown, "SERVER.md's endpoint table is the one the code prints",
             "regenerate it with: ckbrowse serve --endpoints markdown")
checks.check(len(table) >= 30 and all(r["caller"] and r["pages"] for r in table), f"the table names {len(table)} endpoints, each with a caller and pages")

OTHER = "iCloud.com.example.Elsewhere"
s = Serve(os.path.join(work, "walk"), ["--api-token", f"{API}@{C}", "--api-token", f"other-api@{OTHER}",
                                       "--user", f"alice:{ALICE}:alice@example.com", "--user", f"bob:{BOB}:bob@example.com",
                                       "--user", "carol:carol-token:carol@example.com", "--container", C,
                                       "--schema", schema_file, "--role", "bob:Moderator"])

ZONE = {"zoneName": "Private"}
BODIES = {
    "zones/lookup": {"zones": [{"zoneID": ZONE}]},
    "zones/modify": {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Walk"}}}]},
    "changes/database": {},
    "changes/zone": {"zones": [{"zoneID": ZONE}]},
    "zones/changes": {},
    "records/changes": {"zoneID": ZONE},
    "records/query": {"zoneID": ZONE, "query": {"recordType": "Note"}},
    "records/lookup": {"zoneID": ZONE, "records": [{"recordName": "private-note"}]},
    "records/modify": {"zoneID": ZONE, "operations": [{"operationType": "create", "record": {"recordName": "walk", "recordType": "Note", "fields": {}}}]},
    "subscriptions/lookup": {"subscriptions": [{"subscriptionID": "alice-sub"}]},
    "subscriptions/modify": {"operations": [{"operationType": "delete", "subscription": {"subscriptionID": "alice-sub"}}]},
    "users/discover": {"lookupInfos": [{"emailAddress": "bob@example.com"}]},
    "users/lookup/email": {"users": [{"emailAddress": "bob@example.com"}]},
    "users/lookup/id": {"users": [{"userRecordName": "_x"}]},
    "records/resolve": {"shortGUIDs": [{"value": "nothing", "shouldFetchRootRecord": False}]},
    "records/accept": {"shortGUIDs": [{"value": "nothing", "shouldFetchRootRecord": False}]},
    "assets/upload": {"zoneID": {"zoneName": "_defaultZone"}, "tokens": [{"recordType": "Note", "fieldName": "file"}]},
    "assets/rereference": {"zoneID": {"zoneName": "_defaultZone"}, "assets": [{"recordName": "secret-1", "fieldName": "file"}]},
}


def database_target(rule, scope, container=C):
    return f"/database/1/{container}/development/{scope}/{rule['name']}"


def q(api=API, token=None):
    items = {"ckAPIToken": api} if api else {}
    if token:
        items["ckWebAuthToken"] = token
    return "?" + urllib.parse.urlencode(items)


try:
    # Fixture: alice's private zone and record, her subscription, a public Secret only Moderators read,
    # and a zone alice shares with carol, who accepts and is then removed.
    s.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": ZONE}}]})
    s.call("private", "records/modify", {"zoneID": ZONE, "operations": [{"operationType": "create", "record": {
        "recordName": "private-note", "recordType": "Note", "fields": {"text": {"value": "alice's"}}}}]})
    s.call("private", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": {
        "subscriptionID": "alice-sub", "subscriptionType": "zone", "zoneID": ZONE}}]})
    s.call("public", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordName": "secret-1", "recordType": "Secret", "fields": {"note": {"value": "moderators only"}}}}]}, token=BOB)
    SHARED = {"zoneName": "Shared"}
    s.call("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": SHARED}}]})
    s.call("private", "records/modify", {"zoneID": SHARED, "operations": [{"operationType": "create", "record": {
        "recordName": "shared-note", "recordType": "Note", "fields": {"text": {"value": "for carol"}}}}]})
    status, answer, _ = s.call("private", "records/modify", {"zoneID": SHARED, "operations": [{"operationType": "create", "record": {
        "recordName": "cloudkit.zoneshare", "recordType": "cloudkit.share", "publicPermission": "NONE", "participants": [{
            "userIdentity": {"lookupInfo": {"emailAddress": "carol@example.com"}}, "permission": "READ_WRITE", "type": "USER",
            "acceptanceStatus": "INVITED"}]}}]})
    share = answer["records"][0]
    status, _, _ = s.call("public", "records/accept", {"shortGUIDs": [{"value": share["shortGUID"], "shouldFetchRootRecord": False}]}, token="carol-token")
    shared_zone = {"zoneName": "Shared", "ownerRecordName": share.get("created", {}).get("userRecordName") or share["zoneID"]["ownerRecordName"]}
    status, answer, _ = s.call("shared", "records/lookup", {"zoneID": shared_zone, "records": [{"recordName": "shared-note"}]}, token="carol-token")
    checks.check(status == 200 and "fields" in answer["records"][0], "setup: carol reads the zone alice shares with her", f"{status}")
    # A file in the shared zone: carol's download URL for it works while she may read the record.
    status, answer, _ = s.call("private", "assets/upload", {"zoneID": SHARED, "tokens": [{"recordName": "shared-file", "recordType": "Note", "fieldName": "file"}]})
    upload_path = urllib.parse.urlsplit(answer["tokens"][0]["url"]).path
    status, body, _ = s.request("POST", upload_path, b"shared bytes")
    single = json.loads(body)["singleFile"]
    status, answer, _ = s.call("private", "records/modify", {"zoneID": SHARED, "operations": [{"operationType": "create", "record": {
        "recordName": "shared-file", "recordType": "Note", "fields": {"file": {"value": single}}}}]})
    checks.check(status == 200 and "serverErrorCode" not in answer["records"][0], "setup: alice saves a file in the shared zone", json.dumps(answer)[:200])
    status, answer, _ = s.call("shared", "records/lookup", {"zoneID": shared_zone, "records": [{"recordName": "shared-file"}]}, token="carol-token")
    carol_url = urllib.parse.urlsplit(answer["records"][0]["fields"]["file"]["value"]["downloadURL"]).path.replace("${f}", "f")
    status, body, _ = s.request("GET", carol_url)
    checks.check(status == 200 and body == b"shared bytes", "asset download: a participant's URL works while she is one", f"{status}")
    status, answer, _ = s.call("private", "records/modify", {"zoneID": SHARED, "operations": [{"operationType": "update", "record": {
        "recordName": "cloudkit.zoneshare", "recordType": "cloudkit.share", "recordChangeTag": share["recordChangeTag"], "publicPermission": "NONE",
        "participants": []}}]})
    checks.check(status == 200 and "serverErrorCode" not in answer["records"][0], "setup: alice removes carol", json.dumps(answer)[:200])

    for rule in table:
        name, method = rule["name"], rule["method"]
        if rule["path"].startswith("/database/1/"):
            scopes = re.search(r"\{([a-z,]+)\}/" + re.escape(name) + "$", rule["path"]).group(1).split(",")
            body = None if method == "GET" else BODIES.get(name, {})
            for scope in scopes:
                target = database_target(rule, scope)
                status, _, _ = s.request(method, target + q(api=None), body)
                checks.check(status == 401, f"{name} ({scope}): no credential → 401", f"{status}")
                status, _, _ = s.request(method, database_target(rule, scope, OTHER) + q(api=API, token=ALICE), body)
                checks.check(status == 401, f"{name} ({scope}): an API token of another container → 401", f"{status}")
                if scope in rule["userIn"]:
                    status, _, _ = s.request(method, target + q(), body)
                    checks.check(status == 421, f"{name} ({scope}): no signed-in user → 421", f"{status}")
                status, _, h = s.request(method, target + q(token=ALICE), body, {"Origin": "https://evil.example", "Content-Type": "text/plain"})
                checks.check(status == 403 and "access-control-allow-origin" not in h, f"{name} ({scope}): a page from a foreign origin → 403 before it runs", f"{status}")
                if scope == "private" and name in ("zones/lookup", "changes/zone", "records/changes", "records/query", "records/lookup", "records/modify",
                                                   "subscriptions/lookup", "subscriptions/modify"):
                    status, answer, _ = s.request(method, target + q(token=BOB), body)
                    text = answer.decode(errors="replace")
                    refused = status in (400, 404) or "ZONE_NOT_FOUND" in text or "NOT_FOUND" in text
                    checks.check(refused and "alice's" not in text, f"{name} (private): another user reaches nothing of alice's", f"{status} {text[:120]}")
        else:
            path = rule["path"]
            if name.startswith("tokens/"):
                target = f"/device/1/{C}/development/{name}"
                body = {"apnsEnvironment": "development"}
                status, _, _ = s.request("POST", target + q(api=None), body)
                checks.check(status == 401, f"{name}: no credential → 401", f"{status}")
                status, _, _ = s.request("POST", target + q(), body)
                checks.check(status == 421, f"{name}: no signed-in user → 421", f"{status}")
                status, _, _ = s.request("POST", f"/device/1/{OTHER}/development/{name}" + q(token=ALICE), body)
                checks.check(status == 401, f"{name}: an API token of another container → 401", f"{status}")
            elif name == "webcourier":
                status, _, _ = s.request("GET", "/webcourier/1/not-a-push-token")
                checks.check(status == 404, "webcourier: a push token nobody was given → 404", f"{status}")
                target = "/webcourier/1/x"
            elif name == "asset upload":
                status, _, _ = s.request("POST", "/upload/1/forged", b"bytes")
                checks.check(status == 403, "asset upload: a forged upload URL → 403", f"{status}")
                target = "/upload/1/forged"
            elif name == "asset download":
                status, _, _ = s.request("GET", "/assets/1/forged/file")
                checks.check(status in (403, 404), "asset download: a forged download URL refused", f"{status}")
                target = "/assets/1/forged/file"
            elif name in ("schema", "schema validate/import/deploy/reset", "fixture reset"):
                target = {"schema": f"/schema/1/{C}/development", "fixture reset": f"/admin/1/{C}/development/reset"}.get(name, f"/schema/1/{C}/development/validate")
                status, _, _ = s.request(method, target, b"" if method == "POST" else None)
                checks.check(status == 401, f"{name}: no API token → 401", f"{status}")
                status, _, _ = s.request(method, target.replace(C, OTHER) + q(api=API), b"" if method == "POST" else None)
                checks.check(status == 401, f"{name}: an API token of another container → 401", f"{status}")
                status, _, h = s.request(method, target + q(api=API), b"" if method == "POST" else None, {"Origin": "http://localhost:3000"})
                checks.check(status == 403 and "access-control-allow-origin" not in h, f"{name}: any web page (even an allowed origin) → 403", f"{status}")
                continue
            elif name == "sign-in":
                status, _, h = s.request("POST", "/signin", b"user=alice", {"Origin": "http://localhost:3000", "Content-Type": "application/x-www-form-urlencoded"})
                checks.check(status == 403 and "access-control-allow-origin" not in h, "sign-in: another page's form → 403, no CORS", f"{status}")
                continue
            elif name in ("sign-in page", "share page", "readiness"):
                target = {"sign-in page": f"/signin?container={C}", "share page": "/share/nothing", "readiness": "/ready"}[name]
                status, _, h = s.request("GET", target, None, {"Origin": "http://localhost:3000", "Sec-Fetch-Mode": "cors"})
                checks.check(status == 403 and "access-control-allow-origin" not in h, f"{name}: a script's request → 403, no CORS", f"{status}")
                status, _, _ = s.request("GET", target, None, {"Sec-Fetch-Mode": "navigate"})
                checks.check(status in (200, 404), f"{name}: a person's navigation is answered", f"{status}")
                continue
            status, _, h = s.request(method, target, b"x" if method == "POST" else None, {"Origin": "https://evil.example"})
            checks.check(status == 403 and "access-control-allow-origin" not in h, f"{name}: a page from a foreign origin → 403", f"{status}")

    # The removed participant and the READ grant, on every endpoint that reads records.
    for op, body in [("records/lookup", {"zoneID": shared_zone, "records": [{"recordName": "shared-note"}]}),
                     ("records/query", {"zoneID": shared_zone, "query": {"recordType": "Note"}}),
                     ("records/changes", {"zoneID": shared_zone}),
                     ("changes/zone", {"zones": [{"zoneID": shared_zone}]}),
                     ("zones/lookup", {"zones": [{"zoneID": shared_zone}]})]:
        status, answer, _ = s.call("shared", op, body, token="carol-token")
        text = json.dumps(answer)
        checks.check("for carol" not in text and (status != 200 or "NOT_FOUND" in text or "ZONE_NOT_FOUND" in text or '"records": []' in text),
                     f"{op} (shared): a participant whose share was revoked reads nothing", f"{status} {text[:120]}")
    status, body, _ = s.request("GET", carol_url)
    checks.check(status == 403 and body != b"shared bytes", "asset download: a removed participant's URL stops working", f"{status}")
    status, answer, _ = s.call("shared", "zones/list", method="GET", token="carol-token")
    checks.check("Shared" not in json.dumps(answer), "zones/list (shared): the revoked zone is gone from it")
    for op, body in [("records/lookup", {"records": [{"recordName": "secret-1"}]}),
                     ("records/query", {"query": {"recordType": "Secret"}}),
                     ("assets/rereference", {"zoneID": {"zoneName": "_defaultZone"}, "assets": [{"recordName": "secret-1", "fieldName": "note"}]})]:
        status, answer, _ = s.call("public", op, body, token=ALICE)
        text = json.dumps(answer)
        checks.check("moderators only" not in text and ("ACCESS_DENIED" in text or status in (400, 403) or '"records": []' in text),
                     f"{op} (public): a user without the READ grant reads nothing", f"{status} {text[:120]}")
        status, answer, _ = s.call("public", op, body, token=BOB)
        checks.check(status == 200 and "ACCESS_DENIED" not in json.dumps(answer) or op == "assets/rereference",
                     f"{op} (public): a Moderator reads it", f"{status}")
finally:
    s.stop()

import shutil
shutil.rmtree(work, ignore_errors=True)
checks.done()
