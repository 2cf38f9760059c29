// The viewer: open files, route between their sections, find hashes,
// compare items. Each kind of item has its own view module.

import { el, sbytes, toast, describeError, download, nextFrame } from "./util.js";
import { HexView } from "./hex.js";
import { core, detect, warmUp } from "./xk.js";
import * as shardView from "./shardview.js";
import * as xorbView from "./xorbview.js";
import * as fileView from "./fileview.js";
import * as compareView from "./compareview.js";
import { setupFind } from "./find.js";
import { setupTransfer, showStored } from "./upload.js"; // the Upload and Download panels
import { takeHandoff } from "./handoff.js";

const views = { shard: shardView, "bad-shard": shardView, xorb: xorbView, file: fileView, compare: compareView };

const state = {
  items: [],
  route: {},
  pending: null, // a route from the URL whose item is not open yet
};

const $ = (id) => document.getElementById(id);
let hex;

/** What the views may call back into. */
export const ctx = {
  get hex() { return hex; },
  state,
  go,
  setRow,
  openBytes,
  refresh: () => render(),
  itemById: (id) => state.items.find((i) => i.id === id),
  renderItems: () => renderItems(),
};

// --- routing: #item=NAME&sec=SECTION&sel=N&row=N ---------------------------

function encodeRoute(r) {
  const p = new URLSearchParams();
  for (const k of ["item", "sec", "sel", "row", "off"]) if (r[k] != null && r[k] !== "") p.set(k, String(r[k]));
  return "#" + p.toString();
}

function decodeRoute(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const r = {};
  for (const k of ["item", "sec", "sel", "row", "off"]) if (p.has(k)) r[k] = p.get(k);
  for (const k of ["sel", "row", "off"]) if (r[k] != null) r[k] = Number(r[k]);
  return r;
}

/** Navigates to a route (a full one, or changes to the current one). */
function go(patch, { replace = false, keep = false } = {}) {
  const r = keep ? { ...state.route, ...patch } : patch;
  const h = encodeRoute(r);
  if (location.hash === h) { applyRoute(r); return; }
  if (replace) { history.replaceState(null, "", h); applyRoute(r); }
  else location.hash = h; // hashchange applies it
}

/** Records the selected row in the URL without redrawing. */
function setRow(row, extra = {}) {
  state.route = { ...state.route, row, ...extra };
  delete state.route.off; // a finding's mark ends with a new selection
  history.replaceState(null, "", encodeRoute(state.route));
}

function applyRoute(r) {
  const item = state.items.find((i) => i.id === r.item);
  if (r.item && !item) {
    state.pending = r;
    state.route = {};
    render();
    return;
  }
  state.pending = null;
  state.route = item ? r : {};
  render();
}

window.addEventListener("hashchange", () => applyRoute(decodeRoute(location.hash)));

// --- items ---------------------------------------------------------------

let seq = 0;

function uniqueId(name) {
  const base = name.replace(/[^\w.\-]+/g, "_").slice(0, 80) || "item";
  let id = base, n = 2;
  while (state.items.some((i) => i.id === id)) id = `${base}~${n++}`;
  return id;
}

/**
 * Opens bytes, or a File or Blob, as a new item (files the user picked, or
 * derived ones). A Blob is read while its item shows "Reading…".
 */
async function openBytes(name, source, { select = true, as } = {}) {
  const blob = source instanceof Blob ? source : null;
  const item = { id: uniqueId(name), name, size: blob ? blob.size : source.length, bytes: blob ? null : source, kind: "loading", reading: !!blob, seq: ++seq };
  state.items.push(item);
  renderItems();
  const pendingHere = state.pending && state.pending.item === item.id ? state.pending : null;
  if (select && !pendingHere) go({ item: item.id });
  const tStart = performance.now();
  try {
    if (blob) {
      // The "Reading…" screen is drawn while the bytes come.
      try {
        item.bytes = new Uint8Array(await blob.arrayBuffer());
      } catch (err) {
        throw new Error(`could not read the file: ${describeError(err).msg}`);
      }
      item.reading = false;
    } else if (select) {
      await nextFrame(); // paint "Parsing…" before the module works
    }
    const bytes = item.bytes;
    const t0 = performance.now();
    const d = as ? { kind: as } : await detect(bytes, name);
    const t1 = performance.now();
    item.kind = d.kind;
    item.parsed = d.parsed;
    item.error = d.error;
    item.validate = d.validate;
    item.notXorb = d.notXorb;
    await views[item.kind].init?.(item, ctx);
    item.phases = { read: blob ? t0 - tStart : 0, detect: t1 - t0, prepare: performance.now() - t1 };
  } catch (err) {
    item.kind = "error";
    item.error = err;
    console.warn(err);
  }
  renderItems();
  if (pendingHere) go(pendingHere, { replace: true });
  else if (state.route.item === item.id) render();
  return item;
}

/** Adds a non-file item (a comparison). */
export function addItem(item, { select = true } = {}) {
  item.id = uniqueId(item.name);
  item.seq = ++seq;
  state.items.push(item);
  renderItems();
  if (select) go({ item: item.id });
  return item;
}
ctx.addItem = addItem;

function closeItem(id) {
  const i = state.items.findIndex((x) => x.id === id);
  if (i < 0) return;
  const [gone] = state.items.splice(i, 1);
  gone.closed = true;
  renderItems();
  if (state.route.item === id) {
    const next = state.items[Math.min(i, state.items.length - 1)];
    go(next ? { item: next.id } : {}, { replace: true });
  }
}

async function openFiles(files) {
  for (const f of files) {
    const t0 = performance.now();
    const item = await openBytes(f.name, f);
    // Time from picking to the first screen drawn: the e2e tests print it.
    requestAnimationFrame(() => setTimeout(() => {
      timings.push({ name: f.name, kind: item.kind, size: f.size, ms: performance.now() - t0, ...item.phases });
    }, 0));
  }
}

const timings = [];

const kindLabels = {
  loading: "…", shard: "shard", "bad-shard": "bad shard", xorb: "xorb", file: "file", compare: "compare", error: "error",
};

function renderItems() {
  const nav = $("items");
  nav.replaceChildren(...state.items.map((it) => el("div.itab" + (it.id === state.route.item ? ".current" : ""), {
    dataset: { item: it.id, kind: it.kind },
  },
  el("a.itab-link", {
    href: encodeRoute({ item: it.id }),
    "aria-current": it.id === state.route.item ? "page" : null,
    title: `${it.name} (${it.kind}${it.size != null ? ", " + sbytes(it.size) : ""})`,
  }, el("span.badge.k-" + it.kind, kindLabels[it.kind] || it.kind), el("span.itab-name", it.name)),
  el("button.itab-close", { type: "button", "aria-label": `Close ${it.name}`, title: "Close", onclick: () => closeItem(it.id) }, "×"))));
  nav.hidden = state.items.length === 0;
}

// --- main area -------------------------------------------------------------

function render() {
  renderItems();
  const main = $("main");
  const item = state.items.find((i) => i.id === state.route.item);
  $("hexpane").hidden = !item || item.kind === "compare";
  if (!item) {
    const welcome = $("welcome") || el("section.welcome#welcome");
    const kids = [welcome];
    if (state.pending) {
      kids.unshift(el("div.notice", { role: "status" },
        `This link points to “${state.pending.sec || "summary"}” of ${state.pending.item}. Open that file to go there.`));
    }
    main.replaceChildren(...kids);
    return;
  }
  const view = views[item.kind];
  const secs = view ? view.sections(item) : [];
  const sec = secs.some((s) => s.id === state.route.sec) ? state.route.sec : secs[0]?.id;
  if (state.route.sec !== sec) {
    state.route = { ...state.route, sec };
    history.replaceState(null, "", encodeRoute(state.route));
  }
  const actions = el("div.item-actions",
    view?.exportJSON && item.kind !== "loading" ? el("button.btn", {
      type: "button",
      onclick: async () => {
        try {
          const obj = await view.exportJSON(item, ctx);
          // indentation would double a huge shard's JSON: only small ones get it
          download(item.name + ".json", JSON.stringify(obj, null, (item.size || 0) > 8 << 20 ? 0 : 2), "application/json");
        } catch (err) {
          toast(`Export failed: ${describeError(err).msg}`);
        }
      },
    }, "Export JSON") : null);
  const head = el("div.item-head",
    el("h2.item-title", el("span.badge.k-" + item.kind, kindLabels[item.kind] || item.kind), " ", el("span", item.name),
      item.size != null ? el("span.muted.item-size", ` ${sbytes(item.size)}`) : null),
    actions);
  const curSec = secs.find((s) => s.id === sec);
  const tabSec = curSec?.parent || sec;
  const tabs = el("div.sections", { role: "tablist", "aria-label": "Sections" }, secs.filter((s) => !s.hidden).map((s) => el("a.sec" + (s.id === tabSec ? ".current" : ""), {
    role: "tab",
    href: encodeRoute({ item: item.id, sec: s.id }),
    "aria-selected": s.id === tabSec ? "true" : "false",
    dataset: { sec: s.id },
  }, s.label, s.count != null ? el("span.count", s.count.toLocaleString("en-US")) : null)));
  const content = el("div.content#content", { role: "tabpanel", tabindex: "0", "aria-label": secs.find((s) => s.id === sec)?.label || "" });
  main.replaceChildren(...[head, secs.filter((s) => !s.hidden).length > 1 ? tabs : null, content].filter(Boolean));
  if (item.kind === "loading") {
    content.append(el("p.muted", `${item.reading ? "Reading" : "Parsing"} ${sbytes(item.size)}…`));
    return;
  }
  if (item.kind === "error") {
    content.append(el("div.error", { role: "alert" }, `Could not open ${item.name}: ${describeError(item.error).msg}`));
    return;
  }
  try {
    view.render(item, state.route, content, ctx);
  } catch (err) {
    console.warn(err);
    content.replaceChildren(el("div.error", { role: "alert" }, `Could not show this section: ${describeError(err).msg}`));
  }
}

// --- drag and drop, open button, keys -----------------------------------------

function setupOpen() {
  const input = $("open-input");
  const label = $("open-label");
  input.addEventListener("change", () => {
    const files = [...input.files];
    input.value = "";
    openFiles(files);
  });
  label.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); input.click(); }
  });
  let depth = 0;
  const drop = $("drop");
  const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes("Files");
  window.addEventListener("dragenter", (e) => { if (hasFiles(e)) { depth++; drop.hidden = false; } });
  window.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; drop.hidden = true; } });
  window.addEventListener("dragover", (e) => { if (hasFiles(e)) e.preventDefault(); });
  window.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    drop.hidden = true;
    if (e.dataTransfer?.files?.length) openFiles([...e.dataTransfer.files]);
  });
}

function setupKeys() {
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
    if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      $("find-input").focus();
      $("find-input").select();
    }
  });
}

async function start() {
  hex = new HexView($("hexpane"));
  setupOpen();
  setupKeys();
  setupFind(ctx);
  $("compare-btn").addEventListener("click", () => compareView.openDialog(ctx));
  setupTransfer(ctx); // the Upload and Download panels
  applyRoute(decodeRoute(location.hash));
  // Load the core module early so the first file opens fast; report if it
  // cannot. The full module waits until it is needed (xk.js).
  try {
    await core();
    await warmUp();
    // Files dropped on a page of the hub, which came here to open them.
    if (location.hash === "#handoff") {
      history.replaceState(null, "", location.pathname);
      for (const f of await takeHandoff()) await openBytes(f.name, f);
    }
    document.body.dataset.ready = "1";
    // A file's page on the hub links here to show how the file is stored.
    const q = new URLSearchParams(location.hash.slice(1));
    if (q.has("stored")) {
      history.replaceState(null, "", location.pathname);
      await showStored({ repoType: q.get("type") || "model", repo: q.get("repo"), revision: q.get("rev") || "main", path: q.get("path") });
    }
  } catch (err) {
    document.body.dataset.ready = "0";
    $("main").prepend(el("div.error", { role: "alert" }, `The WebAssembly module did not load: ${describeError(err).msg}. Run scripts/build-wasm.sh and reload.`));
  }
  await nextFrame();
}

// For the e2e tests and the console: open bytes as if dropped.
window.xetkitViewer = { openBytes, state, ctx, timings };

start();
