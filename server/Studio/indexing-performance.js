// Script of /studio/indexing-performance (CSP: no inline script).
"use strict";

// Top-level operations of a batch, in the order the loop runs them, with their colours. Time a
// batch spent outside all of them is drawn as "Other".
const OPERATIONS = [
  ["Storage/Read", "#4e79a7"],
  ["Map", "#f28e2b"],
  ["Lucene/Write", "#59a14f"],
  ["References", "#b07aa1"],
  ["Lucene/Refresh", "#76b7b2"],
  ["Lucene/Commit", "#e15759"],
];
const OTHER = ["Other", "#c8c3bf"];
const COLOURS = new Map([...OPERATIONS, OTHER]);
const MIN_BAR_PX = 2;       // a 0.1 ms batch is still visible
const SEGMENT_MIN_PX = 6;   // narrower bars get one colour, their largest operation's
const SVG = "http://www.w3.org/2000/svg";
const LABEL_WIDTH = 210;
const LANE_HEIGHT = 30;
const AXIS_HEIGHT = 26;

const $ = id => document.getElementById(id);
const database = new URLSearchParams(location.search).get("database");

// lanes: index name -> { name, batches: [{ key, start, end, live, raw }] sorted by start, keys: Set }
const lanes = new Map();
const view = { span: 15000, follow: true, end: 0 };
let drawPending = false;
let hovered = null; // { index, key } of the bar under the mouse, kept across redraws

function showMessage(text, detail) {
  const box = $("message");
  box.replaceChildren(text);
  if (detail) {
    box.append(document.createElement("br"), detail);
  }
  box.hidden = false;
}

function setStatus(state, text) {
  const status = $("status");
  status.dataset.state = state;
  status.textContent = text;
}

// ---- data ---------------------------------------------------------------------------------

function laneOf(name) {
  let lane = lanes.get(name);
  if (!lane) {
    lane = { name, batches: [], keys: new Set() };
    lanes.set(name, lane);
  }
  return lane;
}

// Adds batches of one index, skipping those already there (a refetch after a reconnect or a
// "Dropped" notice overlaps what came live). Ids restart when an index is reset, so the key has
// the start time too.
function addBatches(name, batches, live) {
  const lane = laneOf(name);
  let unordered = false;
  for (const raw of batches) {
    const key = raw.Id + "@" + raw.Started;
    if (lane.keys.has(key)) {
      continue;
    }
    const start = Date.parse(raw.Started);
    const last = lane.batches[lane.batches.length - 1];
    unordered ||= last !== undefined && start < last.start;
    lane.keys.add(key);
    lane.batches.push({ key, start, end: start + Math.max(0, raw.DurationInMs), live, raw });
  }
  if (unordered) {
    lane.batches.sort((a, b) => a.start - b.start);
  }
}

// An index runs one batch at a time, so its last batch (by start) is also the last to end.
function extent() {
  let first = Infinity, last = -Infinity;
  for (const lane of lanes.values()) {
    if (lane.batches.length > 0) {
      first = Math.min(first, lane.batches[0].start);
      last = Math.max(last, lane.batches[lane.batches.length - 1].end);
    }
  }
  return first === Infinity ? null : { first, last };
}

async function loadHistory() {
  const response = await fetch(`/databases/${encodeURIComponent(database)}/indexes/performance`, { headers: { Accept: "application/json" } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not JSON: reported below with the status
  }
  if (!response.ok) {
    const reason = body && body.Message ? body.Message : `The server answered ${response.status} ${response.statusText}.`;
    throw new Error(reason);
  }
  for (const index of body.Results) {
    addBatches(index.Name, index.Performance, false);
  }
}

// ---- live ---------------------------------------------------------------------------------

let retryDelay = 1000;

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}/databases/${encodeURIComponent(database)}/indexes/performance/live`);
  socket.onopen = () => {
    retryDelay = 1000;
    setStatus("live", "live");
  };
  socket.onmessage = event => {
    const message = JSON.parse(event.data);
    if (Array.isArray(message)) {
      for (const index of message) {
        addBatches(index.Name, index.Performance, true);
      }
    } else if (message.Type === "Dropped") {
      // The server lost batches for this slow reader: its history still has them.
      setStatus("live", `live (${message.Count} batches arrived late)`);
      loadHistory().catch(() => {});
    }
    scheduleDraw();
  };
  socket.onclose = () => {
    setStatus("error", `disconnected, retrying in ${Math.round(retryDelay / 1000)} s`);
    setTimeout(() => {
      // Batches finished while disconnected are in the history.
      loadHistory().then(scheduleDraw, () => {}).finally(connect);
    }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  };
}

// ---- drawing ------------------------------------------------------------------------------

function element(name, attributes, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) {
    node.setAttribute(key, value);
  }
  if (parent) {
    parent.append(node);
  }
  return node;
}

function scheduleDraw() {
  if (!drawPending) {
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      draw();
    });
  }
}

// The time range on screen: the last `span` ms of indexing (of the server's clock, so the
// browser's clock does not matter), everything, or where the reader dragged it.
function visibleRange() {
  const all = extent();
  if (!all) {
    const now = Date.now();
    return { from: now - (view.span === "all" ? 60000 : view.span), to: now };
  }
  if (view.span === "all") {
    const pad = Math.max(50, (all.last - all.first) * 0.02);
    return { from: all.first - pad, to: all.last + pad };
  }
  const end = view.follow ? all.last + view.span * 0.02 : view.end;
  view.end = end;
  return { from: end - view.span, to: end };
}

function niceStep(ms) {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000];
  return steps.find(step => step >= ms) || 7200000;
}

function clock(ms, step) {
  const time = new Date(ms);
  const two = n => String(n).padStart(2, "0");
  let text = `${two(time.getHours())}:${two(time.getMinutes())}:${two(time.getSeconds())}`;
  if (step < 1000) {
    text += "." + String(time.getMilliseconds()).padStart(3, "0");
  }
  return text;
}

function segments(batch) {
  const operations = batch.raw.Details ? batch.raw.Details.Operations : [];
  const total = Math.max(batch.raw.DurationInMs, 1e-9);
  const parts = [];
  let used = 0;
  for (const [name] of OPERATIONS) {
    const duration = operations.filter(o => o.Name === name).reduce((sum, o) => sum + o.DurationInMs, 0);
    if (duration > 0) {
      parts.push([name, duration / total]);
      used += duration;
    }
  }
  // Operations this page does not know by name, and time between operations.
  if (total - used > total * 0.005) {
    parts.push([OTHER[0], (total - used) / total]);
  }
  const sum = parts.reduce((s, [, share]) => s + share, 0) || 1;
  return parts.map(([name, share]) => [name, share / sum]);
}

function draw() {
  const svg = $("chart");
  const width = Math.max(svg.clientWidth || $("timeline").clientWidth, 400);
  const labelWidth = LABEL_WIDTH, laneHeight = LANE_HEIGHT, axisHeight = AXIS_HEIGHT;
  const names = [...lanes.keys()].sort((a, b) => a.localeCompare(b));
  const height = axisHeight + Math.max(names.length, 1) * laneHeight + 4;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("height", height);
  svg.replaceChildren();
  if (names.length === 0) {
    element("text", { class: "empty", x: 12, y: axisHeight + 18 }, svg).textContent =
      "No index has run a batch yet: batches appear here as they happen.";
    return;
  }

  const range = visibleRange();
  const plotWidth = width - labelWidth - 8;
  const scale = plotWidth / (range.to - range.from);
  const x = time => labelWidth + (time - range.from) * scale;

  // Axis and grid.
  const step = niceStep(100 / scale);
  const axis = element("g", { class: "axis" }, svg);
  element("text", { x: 10, y: axisHeight - 9 }, axis).textContent = "index";
  element("text", { x: labelWidth - 8, y: axisHeight - 9, "text-anchor": "end" }, axis).textContent = "batches";
  const grid = element("g", { class: "grid" }, svg);
  for (let tick = Math.ceil(range.from / step) * step; tick <= range.to; tick += step) {
    const px = x(tick);
    element("line", { x1: px, x2: px, y1: axisHeight - 4, y2: height }, grid);
    const label = element("text", { x: px + 3, y: axisHeight - 9 }, axis);
    label.textContent = clock(tick, step);
  }

  // Lanes.
  names.forEach((name, row) => {
    const lane = lanes.get(name);
    const top = axisHeight + row * laneHeight;
    const group = element("g", { class: "lane", "data-index": name }, svg);
    element("rect", { class: "lane-background", x: 0, y: top + 1, width, height: laneHeight - 2 }, group);
    // The full name shows on hover of a shortened label.
    const labelGroup = element("g", {}, group);
    element("title", {}, labelGroup).textContent = name;
    element("text", { class: "lane-label", x: 10, y: top + laneHeight / 2 + 4 }, labelGroup).textContent =
      name.length > 25 ? name.slice(0, 24) + "…" : name;
    const count = element("text", { class: "lane-count", x: labelWidth - 8, y: top + laneHeight / 2 + 4, "text-anchor": "end" }, group);
    count.textContent = String(lane.batches.length);

    const clip = element("svg", { x: labelWidth, y: top + 4, width: plotWidth, height: laneHeight - 8, overflow: "hidden" }, group);
    for (const batch of lane.batches) {
      if (batch.end < range.from || batch.start > range.to) {
        continue;
      }
      const left = x(batch.start) - labelWidth;
      const exact = (batch.end - batch.start) * scale;
      // A pixel of gap keeps back-to-back batches apart once they are wide enough to spare it.
      const barWidth = Math.max(MIN_BAR_PX, exact >= 4 ? exact - 1 : exact);
      const bar = element("g", { class: "batch", "data-index": name, "data-key": batch.key, "data-id": batch.raw.Id }, clip);
      if (batch.live) {
        bar.setAttribute("data-live", "");
      }
      if (hovered && hovered.index === name && hovered.key === batch.key) {
        bar.classList.add("active");
      }
      const parts = segments(batch);
      if (barWidth < SEGMENT_MIN_PX || parts.length === 0) {
        const main = parts.reduce((best, part) => (part[1] > best[1] ? part : best), [OTHER[0], 0]);
        element("rect", { x: left, y: 0, width: barWidth, height: laneHeight - 8, fill: COLOURS.get(main[0]) }, bar);
      } else {
        let offset = left;
        for (const [operation, share] of parts) {
          element("rect", { x: offset, y: 0, width: share * barWidth, height: laneHeight - 8, fill: COLOURS.get(operation), "data-operation": operation }, bar);
          offset += share * barWidth;
        }
      }
    }
  });
}

// ---- tooltip ------------------------------------------------------------------------------

function formatBytes(bytes) {
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = bytes, unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return (unit === 0 ? String(value) : value.toFixed(value < 10 ? 2 : 1)) + " " + units[unit];
}

const formatMs = ms => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2)) + " ms";
const formatCount = n => Number(n).toLocaleString("en-US");

function html(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) {
    node.textContent = text;
  }
  if (className) {
    node.className = className;
  }
  return node;
}

function operationTree(operation) {
  const item = html("li");
  const colour = COLOURS.get(operation.Name);
  if (colour) {
    const swatch = html("i", undefined, "swatch");
    swatch.style.background = colour;
    item.append(swatch);
  }
  item.append(operation.Name + " ", html("span", formatMs(operation.DurationInMs)));
  if (operation.Operations && operation.Operations.length > 0) {
    const list = html("ul");
    for (const child of operation.Operations) {
      list.append(operationTree(child));
    }
    item.append(list);
  }
  return item;
}

function showTooltip(target, event) {
  const lane = lanes.get(target.dataset.index);
  const batch = lane && lane.batches.find(b => b.key === target.dataset.key);
  if (!batch) {
    return;
  }
  const raw = batch.raw;
  const tooltip = $("tooltip");
  const rows = html("dl");
  const row = (name, value) => rows.append(html("dt", name), html("dd", value));
  row("Started", raw.Started);
  row("Completed", raw.Completed);
  row("Duration", formatMs(raw.DurationInMs));
  row("Input", formatCount(raw.InputCount));
  row("Output", formatCount(raw.OutputCount));
  row("Failed", formatCount(raw.FailedCount));
  row("Allocated", formatBytes(raw.AllocatedBytes));
  row("Documents", formatBytes(raw.DocumentsSize ? raw.DocumentsSize.SizeInBytes : 0));
  const operations = html("div", undefined, "operations");
  if (raw.Details) {
    const list = html("ul");
    list.append(operationTree(raw.Details));
    operations.append(list);
  }
  tooltip.replaceChildren(html("h2", `${target.dataset.index} · batch ${raw.Id}`), rows, operations);
  tooltip.hidden = false;
  moveTooltip(event);
}

function moveTooltip(event) {
  const tooltip = $("tooltip");
  const margin = 14;
  let left = event.clientX + margin, top = event.clientY + margin;
  if (left + tooltip.offsetWidth > innerWidth) {
    left = Math.max(0, event.clientX - margin - tooltip.offsetWidth);
  }
  if (top + tooltip.offsetHeight > innerHeight) {
    top = Math.max(0, event.clientY - margin - tooltip.offsetHeight);
  }
  tooltip.style.left = left + "px";
  tooltip.style.top = top + "px";
}

// ---- interaction --------------------------------------------------------------------------

function wire() {
  const chart = $("chart");
  const leave = () => {
    chart.querySelector(".batch.active")?.classList.remove("active");
    hovered = null;
    $("tooltip").hidden = true;
  };
  chart.addEventListener("mousemove", event => {
    const bar = event.target.closest(".batch");
    if (!bar) {
      leave();
    } else if (hovered && hovered.index === bar.dataset.index && hovered.key === bar.dataset.key) {
      moveTooltip(event);
    } else {
      leave();
      hovered = { index: bar.dataset.index, key: bar.dataset.key };
      bar.classList.add("active");
      showTooltip(bar, event);
    }
  });
  chart.addEventListener("mouseleave", leave);

  // Dragging pans back in time; that stops following until "Follow live" is ticked again.
  let drag = null;
  chart.addEventListener("mousedown", event => {
    const range = visibleRange();
    if (view.span !== "all") {
      drag = { x: event.clientX, end: range.to, perPx: (range.to - range.from) / (chart.clientWidth - LABEL_WIDTH - 8) };
      $("timeline").classList.add("dragging");
    }
  });
  addEventListener("mousemove", event => {
    if (drag && Math.abs(event.clientX - drag.x) > 2) {
      view.follow = false;
      $("follow").checked = false;
      view.end = drag.end - (event.clientX - drag.x) * drag.perPx;
      scheduleDraw();
    }
  });
  addEventListener("mouseup", () => {
    drag = null;
    $("timeline").classList.remove("dragging");
  });

  $("window").addEventListener("change", event => {
    const value = event.target.value;
    view.span = value === "all" ? "all" : Number(value);
    scheduleDraw();
  });
  $("follow").addEventListener("change", event => {
    view.follow = event.target.checked;
    scheduleDraw();
  });
  addEventListener("resize", scheduleDraw);
}

function drawLegend() {
  for (const [name, colour] of [...OPERATIONS, OTHER]) {
    const item = html("li");
    const swatch = html("span", undefined, "swatch");
    swatch.style.background = colour;
    item.append(swatch, name);
    $("legend").append(item);
  }
}

async function start() {
  drawLegend();
  if (!database) {
    setStatus("error", "no database");
    const example = html("code", `${location.pathname}?database=Northwind`);
    showMessage("No database given: add ?database=NAME to the address, e.g. ", example);
    return;
  }
  $("database").textContent = database;
  document.title = `Indexing performance · ${database} · Jackdaw`;
  try {
    await loadHistory();
  } catch (error) {
    setStatus("error", "not loaded");
    showMessage(`Could not load the indexing performance of database '${database}'.`, error.message);
    return;
  }
  $("timeline").hidden = false;
  wire();
  draw();
  setStatus("connecting", "connecting…");
  connect();
}

start();
