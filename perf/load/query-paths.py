#!/usr/bin/env python3
"""Writes the query paths perf/load/query.sh drives (fixed seed), from the orders corpus.

    query-paths.py CORPUS OUT-FOLDER [DB] [COUNT]

OUT/equality.txt  GET /databases/DB/queries?query=from Orders where Company = '<c>', for companies
                  with 1 to 10 orders (so each answer holds at most 10 documents)
OUT/range.txt     GET ...?query=from Orders where Freight >= <lo> and Freight < <lo + 20>
                  order by Freight limit 10 (lo uniform in 0..280: about 6,700 matches each)
OUT/between.txt   the same ranges written `Freight between <lo> and <lo + 20>` (one Lucene range
                  query instead of two half-open ones joined by and)
OUT/company-values.txt  the companies used for equality (one per line, for peers)
"""
import collections
import gzip
import json
import random
import sys
import urllib.parse

corpus, out = sys.argv[1], sys.argv[2]
db = sys.argv[3] if len(sys.argv) > 3 else "bench"
count = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
companies = collections.Counter()
with gzip.open(corpus, "rt", encoding="utf-8") as f:
    for line in f:
        companies[json.loads(line)["Company"]] += 1
rng = random.Random(20261125)
eligible = sorted(c for c, n in companies.items() if n <= 10)
chosen = rng.sample(eligible, count)


def path(query):
    return f"/databases/{db}/queries?query=" + urllib.parse.quote(query, safe="")


with open(f"{out}/equality.txt", "w") as f:
    for c in chosen:
        f.write(path(f"from Orders where Company = '{c}'") + "\n")
with open(f"{out}/company-values.txt", "w") as f:
    f.write("\n".join(chosen) + "\n")
lows = [rng.randrange(0, 28000) / 100 for _ in range(count)]
with open(f"{out}/range.txt", "w") as f:
    for lo in lows:
        f.write(path(f"from Orders where Freight >= {lo} and Freight < {lo + 20:.2f} order by Freight limit 10") + "\n")
with open(f"{out}/between.txt", "w") as f:
    for lo in lows:
        f.write(path(f"from Orders where Freight between {lo} and {lo + 20:.2f} order by Freight limit 10") + "\n")
