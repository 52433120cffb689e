#!/usr/bin/env python3
"""The compiler keeps the architecture, and this check keeps the compiler honest.

Reads `swift package dump-package` and every `import` line under Sources/, and fails when:
  1. RecordBrowser or TerminalUI (the pure core) depend, transitively, on a module that does I/O:
     any external package product (AsyncHTTPClient, NIO, Hummingbird, ...) or one of our
     modules that uses one (CloudKitWeb, CloudKitLocal, BrowserRuntime, BrowserRuntimeTesting, CursesBackend,
     ckbrowse);
  2. a target imports a module it does not declare in Package.swift (it would build only because a
     sibling pulled the module in);
  3. ARCHITECTURE.md's "Who may import whom" table does not list exactly what each target imports;
  4. `BrowserState` stores more than 15 properties (what is global; each screen carries its own state
     on the stack), printing them;
  5. the browser core sizes anything by `height -` / `width -` arithmetic outside `Layout.swift` (keys
     and drawing must read one layout).
Prints "N passed, M failed".
"""
import json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYSTEM = {"Foundation", "Dispatch", "Glibc", "Darwin", "Musl", "FoundationEssentials", "Synchronization", "_Concurrency", "os"}
PURE = ["RecordBrowser", "TerminalUI"]
IO_TARGETS = {"CloudKitWeb", "CloudKitLocal", "BrowserRuntime", "BrowserRuntimeTesting", "CursesBackend", "ckbrowse"}

passed = failed = 0
def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"  ok   {what}")
    else:
        failed += 1
        print(f"  FAIL {what}")

dump = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True).stdout)
targets = {t["name"]: t for t in dump["targets"]}
local = set(targets)

def deps(name):
    """(local target names, external product names) a target declares."""
    names, products = set(), set()
    for d in targets[name]["dependencies"]:
        if "byName" in d:
            (names if d["byName"][0] in local else products).add(d["byName"][0])
        elif "target" in d:
            names.add(d["target"][0])
        elif "product" in d:
            products.add(d["product"][0])
    return names, products

def closure(name):
    seen, products, stack = set(), set(), [name]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        names, prods = deps(n)
        products |= prods
        stack += list(names)
    return seen - {name}, products

# 1. The pure core links nothing that does I/O.
for name in PURE:
    reached, products = closure(name)
    check(not products, f"{name} reaches no external package (reached: {sorted(products) or 'none'})")
    check(not (reached & IO_TARGETS), f"{name} reaches none of {sorted(IO_TARGETS)} (reached: {sorted(reached)})")

# 2. Every import is declared.
IMPORT = re.compile(r"^(?:@_exported\s+|@testable\s+|@preconcurrency\s+)*import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)
imports = {}
for name, target in targets.items():
    if target["type"] == "test":
        continue
    path = os.path.join(ROOT, target.get("path") or os.path.join("Sources", name))
    found = set()
    for folder, _, files in os.walk(path):
        for f in files:
            if f.endswith(".swift"):
                found |= set(IMPORT.findall(open(os.path.join(folder, f), encoding="utf-8").read()))
    imports[name] = found
    names, products = deps(name)
    undeclared = sorted(found - SYSTEM - names - products)
    check(not undeclared, f"{name} declares every module it imports (undeclared: {undeclared or 'none'})")

# 3. ARCHITECTURE.md says what the code does.
text = open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8").read()
section = text.split("## Who may import whom", 1)[1].split("\n## ", 1)[0]
table = {}
for row in section.splitlines():
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    if len(cells) == 2 and cells[0].startswith("`"):
        # Remarks in parentheses may name files and functions: only the modules outside them count.
        table[cells[0].strip("`")] = set(re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cells[1])))
for name, found in sorted(imports.items()):
    if not found and name not in table:
        continue  # C targets
    listed = table.get(name)
    check(listed == found, f"ARCHITECTURE.md lists what {name} imports (table: {sorted(listed) if listed is not None else 'missing'}, code: {sorted(found)})")

# 4. The browser's global state stays small: screens carry their own.
state_src = open(os.path.join(ROOT, "Sources/RecordBrowser/State.swift"), encoding="utf-8").read()
body = state_src.split("public struct BrowserState", 1)[1]
depth, end = 0, 0
for i, ch in enumerate(body):
    if ch == "{":
        depth += 1
    elif ch == "}":
        depth -= 1
        if depth == 0:
            end = i
            break
body = body[:end]
stored = []
depth = 0
for line in body.splitlines():
    # Only declarations at the struct's own level; a `{` on the line makes it computed (or observed).
    if depth == 1:
        m = re.match(r"\s*(?:public |internal |private |fileprivate )?(?:private\(set\) |public private\(set\) )?(?:var|let)\s+(\w+)", line)
        if m and ("{" not in line or "didSet" in line or "willSet" in line):
            stored.append(m.group(1))
    depth += line.count("{") - line.count("}")
print(f"  BrowserState stores {len(stored)}: {', '.join(stored)}")
check(0 < len(stored) <= 15, f"BrowserState has at most 15 stored properties ({len(stored)})")

# 5. One layout: no screen arithmetic outside Layout.swift in the browser core.
ARITH = re.compile(r"\b(?:height|width)\s*-\s*[\w(]")
offenders = []
core = os.path.join(ROOT, "Sources/RecordBrowser")
for folder, _, files in os.walk(core):
    for f in files:
        if not f.endswith(".swift") or f == "Layout.swift":
            continue
        for n, line in enumerate(open(os.path.join(folder, f), encoding="utf-8"), 1):
            code = line.split("//", 1)[0]
            if ARITH.search(code):
                offenders.append(f"{f}:{n}")
check(not offenders, f"no height-/width- arithmetic outside Layout.swift (found: {offenders[:10] or 'none'}{' …' if len(offenders) > 10 else ''})")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
