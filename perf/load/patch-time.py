"""Starts a patch by query and times it to completion: prints seconds, documents/s, server CPU µs/document.

    python3 perf/load/patch-time.py URL DB PID QUERY
"""
import json, os, sys, time, urllib.request

url, db, pid, query = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
tick = os.sysconf("SC_CLK_TCK")

def cpu():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick

body = json.dumps({"Query": {"Query": query, "QueryParameters": {}}}).encode()
request = urllib.request.Request(f"{url}/databases/{db}/queries?allowStale=true", data=body, method="PATCH", headers={"Content-Type": "application/json"})
c0, t0 = cpu(), time.monotonic()
op = json.load(urllib.request.urlopen(request))["OperationId"]
while True:
    state = json.load(urllib.request.urlopen(f"{url}/databases/{db}/operations/state?id={op}"))
    if state["Status"] != "InProgress":
        break
    time.sleep(0.02)
t, c = time.monotonic() - t0, cpu() - c0
if state["Status"] != "Completed":
    print("- - - -", file=sys.stdout)
    print(json.dumps(state), file=sys.stderr)
    sys.exit(0)
n = state["Result"]["Total"]
print(f"{t:.2f} {n / t:.0f} {c / n * 1e6:.1f} {n}")
