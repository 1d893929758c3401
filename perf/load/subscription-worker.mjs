// A subscription worker for perf/load/subscription.sh: connects to Jackdaw's worker WebSocket,
// acknowledges every batch, and prints documents/s once it has received the expected count.
// node subscription-worker.mjs <base-url> <db> <subscription> <expected> [maxDocsPerBatch]
import { createRequire } from "node:module";
const require = createRequire(new URL("../../tests/compat/ravendb-node/package.json", import.meta.url));
const WebSocket = require("ws");

const [base, db, name, expectedText, batchText] = process.argv.slice(2);
const expected = Number(expectedText);
const url = `${base.replace(/^http/, "ws")}/databases/${db}/subscriptions/connect?name=${encodeURIComponent(name)}&strategy=OpenIfFree&maxDocsPerBatch=${batchText ?? 4096}`;
const socket = new WebSocket(url);
let received = 0, batches = 0, started = 0;
socket.on("message", data => {
    const message = JSON.parse(data.toString());
    if (message.Type === "ConnectionStatus" && message.Status !== "Accepted") { console.error(message); process.exit(1); }
    if (message.Type === "ConnectionStatus") { started = performance.now(); return; }
    if (message.Type !== "Batch") return;
    received += message.Items.length;
    batches++;
    socket.send(JSON.stringify({ Type: "Acknowledge", Etag: message.LastEtag }));
    if (received >= expected) {
        const seconds = (performance.now() - started) / 1000;
        console.log(JSON.stringify({ documents: received, batches, seconds: +seconds.toFixed(3), perSecond: Math.round(received / seconds) }));
        socket.close();
        process.exit(0);
    }
});
socket.on("error", e => { console.error(e.message); process.exit(1); });
