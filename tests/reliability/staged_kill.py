#!/usr/bin/env python3
"""Staged edits survive SIGKILL: the browser (embedded demo, in tmux) stages an update and a delete,
then is killed with SIGKILL at a random moment, either while staging or right after confirming a
commit. On restart every staged op is restored, or the commit that was in flight is reported as
applied or not applied after a lookup, and the database agrees (never lost, never sent twice)."""
import json, os, random, sqlite3, subprocess, sys, tempfile, time
from common import binary

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
work = tempfile.mkdtemp(prefix="ckkill-")
sessions = [0]
def sock():
    return f"ckb-kill-{os.getpid()}-{sessions[0]}"

conf = os.path.join(work, "tmux.conf")
with open(conf, "w") as f:
    f.write("set -g default-terminal tmux-256color\nset -g remain-on-exit on\nset -g status off\n")
env = f"env LANG=C.UTF-8 TERM=tmux-256color XDG_DATA_HOME={work}/xdg XDG_CACHE_HOME={work}/cache XDG_STATE_HOME={work}/state"


def tmux(*args):
    return subprocess.run(["tmux", "-L", sock(), *args], capture_output=True, text=True).stdout


def screen():
    return tmux("capture-pane", "-p")


def wait(text, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if text in screen():
            return True
        time.sleep(0.05)
    return False


def keys(*k):
    tmux("send-keys", *k)


def start():
    tmux("kill-server")
    sessions[0] += 1  # a fresh tmux server each time (reusing a socket right after kill-server races)
    subprocess.run(["tmux", "-L", sock(), "-f", conf, "new-session", "-d", "-x", "100", "-y", "30", f"{env} {binary()}"], check=True)
    if not wait("3 zones", 60):
        raise SystemExit("the browser did not start:\n" + screen())


def kill9():
    pid = tmux("display", "-p", "#{pane_pid}").strip()
    subprocess.run(["kill", "-9", pid])
    for _ in range(100):
        if tmux("display", "-p", "#{pane_dead}").strip() == "1":
            return
        time.sleep(0.05)


def server_record(name):
    db = sqlite3.connect(os.path.join(work, "xdg", "ckbrowse", "demo", "cloudkit.sqlite"))
    row = db.execute("SELECT fields, deleted FROM record WHERE zone = 'Drafts' AND name = ?", (name,)).fetchone()
    db.close()
    return row


problems = []
stats = {"killed while staging": 0, "killed while committing": 0, "in flight at the kill": 0, "found applied": 0, "found not applied": 0,
         "answer read before the kill": 0, "restored": 0}
for i in range(ROUNDS):
    start()
    keys("j", "Enter")
    wait("loaded")
    upd, dele = f"draft-{i}", f"draft-{i + 12}"
    marker = f"kill-round-{i}"
    keys(":", f"open {upd}", "Enter")
    wait(f"recordName                           {upd}")
    keys("g", "j", "e", "C-u", marker, "Enter")  # g: the first field; j: the second
    wait("staged:")
    keys(":", f"open {dele}", "Enter")
    wait(f"recordName                           {dele}")
    keys("d")
    committing = i % 2 == 1
    if committing:
        wait("staged: delete")
        keys("c")
        wait("POST")
        keys("y")
        time.sleep(rng.uniform(0, 0.03))
        stats["killed while committing"] += 1
    else:
        time.sleep(rng.uniform(0, 0.3))
        stats["killed while staging"] += 1
    kill9()
    journal = [f for f in os.listdir(os.path.join(work, "state", "ckbrowse")) if f.startswith("journal-") and f.endswith(".sqlite")]
    jdb = sqlite3.connect(os.path.join(work, "state", "ckbrowse", journal[0]))
    staged_names = [json.loads(r[0])["recordName"] for r in jdb.execute("SELECT operation FROM staged")]
    inflight = jdb.execute("SELECT COUNT(*) FROM inflight").fetchone()[0]
    jdb.close()
    before_upd = server_record(upd)
    applied_upd = before_upd is not None and marker in (before_upd[0] or "")
    deleted = server_record(dele)
    applied_del = deleted is not None and deleted[1] == 1
    if applied_upd != applied_del:
        problems.append(f"round {i}: half a batch on disk (update {applied_upd}, delete {applied_del})")
    start()
    time.sleep(1.5)  # the restore and any in-flight check
    text = screen()
    keys("b")
    wait("Staged batch")
    batch = screen()
    restored = [n for n in (upd, dele) if f"› Drafts › {n} " in batch]
    if inflight:
        stats["in flight at the kill"] += 1
        expected = "WAS applied" if applied_upd else "NOT applied"
        stats["found applied" if applied_upd else "found not applied"] += 1
        if expected not in text:
            problems.append(f"round {i}: a commit in flight ({'applied' if applied_upd else 'not applied'}) was not reported as {expected}: {text.splitlines()[-2:]}")
        if applied_upd and restored:
            problems.append(f"round {i}: applied, yet still staged (would be sent twice)")
        if not applied_upd and len(restored) != 2:
            problems.append(f"round {i}: not applied, and not all ops restored: {restored}")
    elif applied_upd:
        stats["answer read before the kill"] += 1
        if restored:
            problems.append(f"round {i}: applied and acknowledged, yet still staged")
    else:
        stats["restored"] += 1 if restored else 0
        if sorted(restored) != sorted(n for n in staged_names if n in (upd, dele)):
            problems.append(f"round {i}: journal had {staged_names}, restored {restored}")
        if staged_names and "restored" not in text:
            problems.append(f"round {i}: staged ops restored without a notice: {text.splitlines()[-2:]}")
    keys("X", "y", "q")
    time.sleep(0.5)
tmux("kill-server")
print(f"staged_kill: {ROUNDS} rounds: " + ", ".join(f"{k} {v}" for k, v in stats.items()))
for p in problems:
    print("  " + p)
print("staged_kill: PASS" if not problems else "staged_kill: FAIL")
sys.exit(0 if not problems else 1)
