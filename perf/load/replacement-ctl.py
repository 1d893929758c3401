#!/usr/bin/env python3
"""The index side of perf/load/replacement.sh: Orders/Totals, its replacements and their swap.

    replacement-ctl.py URL DB put K        PUT Orders/Totals with Total multiplied by K (K=1: the plain
                                           definition); on an existing index a changed definition
                                           builds side by side as ReplacementOf/Orders/Totals
    replacement-ctl.py URL DB wait DOCS    waits until no replacement builds and Orders/Totals is not
                                           stale with DOCS entries; prints the seconds it waited
    replacement-ctl.py URL DB watch        polls GET /indexes/status every 20 ms; once a replacement
                                           was seen and is gone (swapped), prints time.monotonic()
                                           of the first poll that saw it gone, and exits
    replacement-ctl.py URL DB progress     "building <processed>/<total>" or "none"
    replacement-ctl.py URL DB replace      POST /indexes/replace?name=Orders/Totals (swap now)
"""
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

url, db, command = sys.argv[1], sys.argv[2], sys.argv[3]
NAME = "Orders/Totals"
REPLACEMENT = "ReplacementOf/" + NAME


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + f"/databases/{db}" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read() or b"null")


def definition(k):
    total = "o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0)"
    if k != 1:
        total += f" * {k}"
    return {"Indexes": [{"Name": NAME, "Maps": [
        f"map('Orders', o => ({{ Company: o.Company, Total: {total}, OrderedAt: o.OrderedAt }}))"]}]}


def names():
    return [i["Name"] for i in call("GET", "/indexes/status")["Indexes"]]


if command == "put":
    call("PUT", "/admin/indexes", definition(int(sys.argv[4])))
elif command == "wait":
    docs, t0 = int(sys.argv[4]), time.monotonic()
    while True:
        if REPLACEMENT not in names():
            stats = call("GET", "/indexes/stats?name=" + urllib.parse.quote(NAME, safe=""))["Results"][0]
            if not stats["IsStale"] and stats["EntriesCount"] >= docs:
                break
        if time.monotonic() - t0 > 600:
            sys.exit(f"{NAME} did not settle in 600 s: {names()}")
        time.sleep(0.1)
    print(f"{time.monotonic() - t0:.2f}")
elif command == "watch":
    seen = False
    while True:
        present = REPLACEMENT in names()
        if present:
            seen = True
        elif seen:
            print(f"{time.monotonic():.6f}", flush=True)
            break
        time.sleep(0.02)
elif command == "progress":
    try:
        stats = call("GET", "/indexes/stats?name=" + urllib.parse.quote(REPLACEMENT, safe=""))["Results"][0]
        progress = stats.get("Progress") or {}
        print(f"building {progress.get('ProcessedDocuments')}/{progress.get('TotalDocuments')}")
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
        print("none")
elif command == "replace":
    request = urllib.request.Request(url + f"/databases/{db}/indexes/replace?name=" + urllib.parse.quote(NAME, safe=""), method="POST")
    urllib.request.urlopen(request, timeout=120).read()
else:
    sys.exit(__doc__)
