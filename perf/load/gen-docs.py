#!/usr/bin/env python3
"""Writes N ~1 KiB documents (fixed seed) as Jackdaw bulk_insert NDJSON and as CouchDB _bulk_docs
batches. Usage: gen-docs.py N OUT_DIR  ->  OUT_DIR/jackdaw.ndjson, OUT_DIR/couch-000.json ..."""
import json, random, sys, os

n, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
rng = random.Random(20261123)
words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua".split()
docs = []
for i in range(1, n + 1):
    text = " ".join(rng.choice(words) for _ in range(120))[:900]
    docs.append({"Name": f"customer {i}", "Email": f"c{i}@example.com", "Age": rng.randint(18, 90),
                 "Score": round(rng.random() * 100, 3), "Active": rng.random() < 0.9, "Text": text})
with open(os.path.join(out, "jackdaw.ndjson"), "w") as f:
    for i, d in enumerate(docs, 1):
        body = dict(d)
        body["@metadata"] = {"@collection": "Docs"}
        f.write(json.dumps({"Id": f"docs/{i}", "Document": body}, separators=(",", ":")) + "\n")
for b in range(0, n, 1000):
    with open(os.path.join(out, f"couch-{b // 1000:03d}.json"), "w") as f:
        json.dump({"docs": [dict(d, _id=f"docs/{i}") for i, d in enumerate(docs[b:b + 1000], b + 1)]}, f, separators=(",", ":"))
