#!/usr/bin/env python3
"""The map-reduce measurements of perf/load/map-reduce.sh (issue 30), on a running Jackdaw server.

    map-reduce.py build URL DB PID mr|map DOCS
        PUTs Orders/ByCompany (mr: count and sum of line totals per company) or its reference, the
        map index Orders/CompanyTotals (the same map, no reduce), then polls GET indexes/stats
        every 50 ms until it is not stale and has mapped DOCS documents. Prints one line:
        seconds documents/s server-CPU-µs-per-document polls.
    map-reduce.py groups URL DB CORPUS
        Loads the corpus into DB with every order's Company set to companies/big (one group of
        100,000 entries), plus orders small/1..10 of companies/small (a group of 10), by bulk insert.
    map-reduce.py update URL DB REPS [DOCS]
        REPS times, alternating (big, small, big, small, ...): one order of that group (orders/1..DOCS, default 100,000) (fixed seed)
        gets a new line quantity, written by POST bulk_docs?waitForIndexesTimeout=00:01:00&
        waitForSpecificIndex=Orders/ByCompany, which answers once the index has reduced that write:
        the time of that request is the latency from the write to the group's result being
        current. Prints "big median p90 small median p90 ratio-of-medians ratio-of-p90s" (ms).
    map-reduce.py paths CORPUS OUT DB
        OUT/mr.txt: GET queries?query=from index 'Orders/ByCompany' where Company = $c; OUT/map.txt:
        the same on the map index Orders/CompanyTotals; the same companies (1-10 orders), fixed seed.
"""
import collections
import gzip
import json
import os
import random
import statistics
import sys
import time
import urllib.parse
import urllib.request

MAP = ("map('Orders', o => ({ Company: o.Company, Count: 1, "
       "Total: o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0) }))")
REDUCE = ("groupBy(r => r.Company).aggregate(g => ({ Company: g.key, "
          "Count: g.values.reduce((c, r) => c + r.Count, 0), "
          "Total: g.values.reduce((t, r) => t + r.Total, 0) }))")
INDEXES = {
    "mr": {"Name": "Orders/ByCompany", "Maps": [MAP], "Reduce": REDUCE, "Fields": {"Company": {"Indexing": "Exact"}}},
    "map": {"Name": "Orders/CompanyTotals", "Maps": [MAP], "Fields": {"Company": {"Indexing": "Exact"}}},
}


def call(url, method, path, body=None, raw=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read() or b"null")


def build(url, db, pid, kind, docs):
    tick = os.sysconf("SC_CLK_TCK")

    def cpu():
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    index = INDEXES[kind]
    c0, t0 = cpu(), time.monotonic()
    call(url, "PUT", f"/databases/{db}/admin/indexes", {"Indexes": [index]})
    polls = 0
    while True:
        stats = call(url, "GET", f"/databases/{db}/indexes/stats?name={urllib.parse.quote(index['Name'], safe='')}")["Results"][0]
        polls += 1
        if not stats["IsStale"] and stats["MapAttempts"] >= docs:
            break
        if stats.get("State") == "Error" or time.monotonic() - t0 > 900:
            print(f"index did not finish: {json.dumps(stats)[:400]}", file=sys.stderr)
            print("- - - -")
            return
        time.sleep(0.05)
    seconds, c1 = time.monotonic() - t0, cpu()
    print(f"{seconds:.2f} {docs / seconds:.0f} {(c1 - c0) * 1e6 / docs:.1f} {polls}")


def groups(url, db, corpus):
    lines = []
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            doc = json.loads(line)
            doc["Company"] = "companies/big"
            lines.append(json.dumps({"Id": doc["@metadata"]["@id"], "Document": doc}, separators=(",", ":")))
            if i < 10:
                small = dict(doc, Company="companies/small")
                small["@metadata"] = {"@collection": "Orders"}
                lines.append(json.dumps({"Id": f"small/{i + 1}", "Document": small}, separators=(",", ":")))
    request = urllib.request.Request(f"{url}/databases/{db}/bulk_insert", data=("\n".join(lines) + "\n").encode(), method="POST",
                                     headers={"Content-Type": "application/x-ndjson"})
    with urllib.request.urlopen(request, timeout=600) as response:
        response.read()


def update(url, db, reps, docs):
    rng = random.Random(20261129)
    ids = {"big": [f"orders/{n}" for n in range(1, docs + 1)], "small": [f"small/{n}" for n in range(1, 11)]}
    times = {"big": [], "small": []}
    path = f"/databases/{db}/bulk_docs?waitForIndexesTimeout=00%3A01%3A00&waitForSpecificIndex=Orders%2FByCompany"
    for rep in range(2 * reps):
        group = "big" if rep % 2 == 0 else "small"
        doc_id = rng.choice(ids[group])
        doc = call(url, "GET", f"/databases/{db}/docs?id={urllib.parse.quote(doc_id, safe='')}")["Results"][0]
        doc["Lines"][0]["Quantity"] = doc["Lines"][0]["Quantity"] % 50 + 1
        body = json.dumps({"Commands": [{"Type": "PUT", "Id": doc_id, "Document": doc}]}).encode()
        t0 = time.perf_counter()
        call(url, "POST", path, raw=body)
        times[group].append((time.perf_counter() - t0) * 1000)
    # The result must be current: the big group's total equals the sum over its orders.
    row = call(url, "GET", f"/databases/{db}/queries?query=" + urllib.parse.quote("from index 'Orders/ByCompany' where Company = 'companies/big'"))["Results"][0]
    assert row["Count"] == docs, row

    def p90(values):
        return statistics.quantiles(values, n=10)[-1]

    b, s = times["big"], times["small"]
    print(f"{statistics.median(b):.2f} {p90(b):.2f} {statistics.median(s):.2f} {p90(s):.2f} "
          f"{statistics.median(b) / statistics.median(s):.2f} {p90(b) / p90(s):.2f}")


def paths(corpus, out, db):
    companies = collections.Counter()
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        for line in f:
            companies[json.loads(line)["Company"]] += 1
    rng = random.Random(20261125)
    chosen = rng.sample(sorted(c for c, n in companies.items() if n <= 10), 2000)
    for kind, name in (("mr", "Orders/ByCompany"), ("map", "Orders/CompanyTotals")):
        with open(f"{out}/{kind}.txt", "w") as f:
            for c in chosen:
                query = f"from index '{name}' where Company = '{c}'"
                f.write(f"/databases/{db}/queries?query=" + urllib.parse.quote(query, safe="") + "\n")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "build":
        build(args[0], args[1], int(args[2]), args[3], int(args[4]))
    elif command == "groups":
        groups(args[0], args[1], args[2])
    elif command == "update":
        update(args[0], args[1], int(args[2]), int(args[3]) if len(args) > 3 else 100000)
    elif command == "paths":
        paths(args[0], args[1], args[2])
    else:
        sys.exit(__doc__)
