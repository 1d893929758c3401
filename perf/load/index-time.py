#!/usr/bin/env python3
"""Times one index build on a running Jackdaw server (perf/load/indexing.sh).

    index-time.py URL DB PID auto|js DOCS

auto: posts `from Orders where Company = $c and Freight > 10` without waiting, which creates
      Auto/Orders/ByCompanyAndFreight; js: PUTs the Orders/Totals JavaScript index.
Then polls GET /databases/DB/indexes/stats every 50 ms until the index is not stale and holds
DOCS entries. Prints one line: seconds documents/s server-CPU-µs-per-document stats-polls
(CPU is utime+stime of PID from /proc, over the same interval).
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

url, db, pid, kind, docs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
TICK = os.sysconf("SC_CLK_TCK")

JS_INDEX = {
    "Indexes": [{
        "Name": "Orders/Totals",
        "Maps": ["map('Orders', o => ({ Company: o.Company, "
                 "Total: o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0), "
                 "OrderedAt: o.OrderedAt }))"],
        "Fields": {"Company": {"Indexing": "Exact"}},
    }]
}
AUTO_QUERY = {"Query": "from Orders where Company = $c and Freight > 10", "QueryParameters": {"c": "companies/1"}}


def cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


c0 = cpu()
t0 = time.monotonic()
try:
    if kind == "auto":
        name = call("POST", f"/databases/{db}/queries", AUTO_QUERY)["IndexName"]
    else:
        call("PUT", f"/databases/{db}/admin/indexes", JS_INDEX)
        name = "Orders/Totals"
except urllib.error.HTTPError as e:
    print(f"HTTP {e.code}: {e.read()[:300].decode(errors='replace')}", file=sys.stderr)
    print("- - - -")
    sys.exit(0)

polls = 0
deadline = t0 + 600
while True:
    stats = call("GET", f"/databases/{db}/indexes/stats?name={urllib.request.quote(name, safe='')}")["Results"][0]
    polls += 1
    if not stats["IsStale"] and stats["EntriesCount"] >= docs:
        break
    if stats.get("State") == "Error" or time.monotonic() > deadline:
        print(f"index {name} did not finish: {json.dumps(stats)[:400]}", file=sys.stderr)
        print("- - - -")
        sys.exit(0)
    time.sleep(0.05)
t1 = time.monotonic()
c1 = cpu()
seconds = t1 - t0
print(f"{seconds:.2f} {docs / seconds:.0f} {(c1 - c0) * 1e6 / docs:.1f} {polls}")
