// A changes-feed client for perf/load/bulk.sh (WATCH=1): connects to a database's changes
// WebSocket, watches every operation (as RavenDB's Node.js client watches its bulk insert) and,
// when stopped (SIGTERM), prints how many OperationStatusChange messages it received.
// node watch-operations.mjs <base-url> <db>
import { createRequire } from "node:module";
const require = createRequire(new URL("../../tests/compat/ravendb-node/package.json", import.meta.url));
const WebSocket = require("ws");

const [base, db] = process.argv.slice(2);
const socket = new WebSocket(`${base.replace(/^http/, "ws")}/databases/${db}/changes`);
let changes = 0;
socket.on("open", () => socket.send(JSON.stringify({ CommandId: 1, Command: "watch-operations", Param: null })));
socket.on("message", data => {
    for (const message of [].concat(JSON.parse(data.toString()))) {
        if (message.Type === "Confirm") console.error("watching");
        if (message.Type === "OperationStatusChange") changes++;
    }
});
process.on("SIGTERM", () => { console.log(changes); process.exit(0); });
