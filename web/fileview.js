// Plain file view: chunked and hashed by the module (on its workers, if it
// has any) with a progress bar; its chunks, the chunks it repeats, its
// file hash and SHA-256, and the upload-form shard a client would send for
// it.

import { el, put, card, bytesCard, num, bytes as fbytes, sbytes, hashCell, kv, download, describeError } from "./util.js";
import { VTable } from "./vtable.js";
import { processFile } from "./xk.js";
import { chunkStrip, sizeHistogram } from "./pictures.js";

/** Starts chunking and hashing; the view shows progress until done. */
export function init(item, ctx) {
  item.progress = 0;
  item.processing = (async () => {
    const t0 = performance.now();
    try {
      item.result = await processFile(item.bytes, (done, total) => {
        item.progress = total ? done / total : 0;
        const bar = document.querySelector(`[data-progress-for="${CSS.escape(item.id)}"]`);
        if (bar) {
          bar.value = item.progress;
          bar.nextSibling.textContent = ` ${Math.floor(item.progress * 100)} % of ${sbytes(total)}`;
        }
      });
      item.ms = performance.now() - t0;
      index(item);
    } catch (err) {
      item.failed = err;
    }
    item.progress = 1;
    if (!item.closed && ctx.state.route.item === item.id) ctx.refresh();
  })();
}

/** Counts repeats: for each chunk, the index of its first occurrence. */
function index(item) {
  const chunks = item.result.chunks;
  const first = new Map();
  const firstOf = new Int32Array(chunks.length);
  const repeats = new Map(); // hash → {first, count, length}
  let repeatedBytes = 0, repeatedCount = 0;
  chunks.forEach((c, i) => {
    const f = first.get(c.hash);
    if (f == null) { first.set(c.hash, i); firstOf[i] = -1; return; }
    firstOf[i] = f;
    repeatedBytes += c.length;
    repeatedCount++;
    const r = repeats.get(c.hash);
    if (r) r.count++;
    else repeats.set(c.hash, { hash: c.hash, first: f, count: 2, length: c.length });
  });
  item.fx = { firstOf, distinct: first.size, repeatedBytes, repeatedCount, repeats: [...repeats.values()].sort((a, b) => b.count - a.count || a.first - b.first) };
}

export function sections(item) {
  const done = !!item.result;
  return [
    { id: "summary", label: "Summary" },
    { id: "chunks", label: "Chunks", count: done ? item.result.chunks.length : null },
    { id: "repeats", label: "Repeated chunks", count: done ? item.fx.repeats.length : null },
  ];
}

export function exportJSON(item) {
  const r = item.result;
  if (!r) throw new Error("still processing");
  return { name: item.name, size: item.bytes.length, fileHash: r.fileHash, sha256: r.sha256, chunks: r.chunks, xorbs: r.xorbs };
}

export function render(item, route, root, ctx) {
  if (item.failed) {
    const e = describeError(item.failed);
    put(root, el("div.error", { role: "alert" }, `Chunking failed: ${e.msg}`));
    return;
  }
  if (!item.result) {
    put(root, el("div.progress", el("label", { for: `p-${item.id}` }, "Chunking and hashing:"),
      el("progress", { id: `p-${item.id}`, max: 1, value: item.progress, dataset: { progressFor: item.id } }),
      el("span.muted", ` ${Math.floor(item.progress * 100)} %`)));
    ctx.hex.show(item.bytes, [], { title: "File bytes", focus: 0 });
    return;
  }
  const r = item.result, fx = item.fx;
  const damaged = item.notXorb ? notXorbNotice(item, ctx) : null;
  if (route.sec === "chunks") return renderChunks(item, route, root, ctx);
  if (route.sec === "repeats") return renderRepeats(item, route, root, ctx);
  put(root, damaged,
    el("div.cards",
      bytesCard("Size", item.bytes.length),
      card("Chunks", num(r.chunks.length), `${num(fx.distinct)} distinct`),
      card("Repeated", num(fx.repeatedCount), `${sbytes(fx.repeatedBytes)} deduplicated within the file`),
      card("Xorbs", num((r.xorbs || []).length), "in the upload"),
      card("Time", `${(item.ms / 1000).toFixed(2)} s`, `${sbytes(item.bytes.length / Math.max(item.ms / 1000, 1e-3))}/s`)),
    el("div.pictures", chunkMap(item), sizeHistogram(r.chunks.map((c) => c.length))),
    kv([
      ["File hash", hashCell(r.fileHash)],
      ["SHA-256", hashCell(r.sha256)],
      ["Upload shard", r.shard ? `${fbytes(r.shard.length)}, upload form: the body of the shard upload request` : "—"],
    ]),
    r.shard ? el("div.actions",
      el("button.btn.primary", { type: "button", onclick: () => ctx.openBytes(`${item.name}.shard`, r.shard) }, "Open the upload shard"),
      el("button.btn", { type: "button", onclick: () => download(`${item.name}.shard`, r.shard) }, "Download the upload shard")) : null,
  );
  ctx.hex.show(item.bytes, r.chunks.length ? [chunkField(r.chunks[0], 0)] : [], { title: "File bytes" });
}

// notXorbNotice says why bytes that begin like a xorb are shown as a plain
// file: the reader's error, with a link to the byte where it failed.
function notXorbNotice(item, ctx) {
  const e = describeError(item.notXorb);
  return el("div.error.not-xorb", { role: "alert" },
    `This looks like a xorb but is damaged: ${e.msg}`,
    e.offset != null ? el("a.offset", {
      href: "#",
      onclick: (ev) => { ev.preventDefault(); ctx.hex.show(item.bytes, [{ name: "damage here", offset: e.offset, size: 1 }], { title: "Where the xorb stops reading", focus: e.offset }); },
    }, ` (byte ${num(e.offset)})`) : "",
    ". It is shown below as a plain file.");
}

// chunkMap draws the file's chunks along its bytes: repeated ones (already
// earlier in the file) apart from the rest, and where each new xorb of the
// upload starts.
function chunkMap(item) {
  const r = item.result, fx = item.fx;
  const spans = r.chunks.map((c, i) => ({ length: c.length, kind: fx.firstOf[i] >= 0 ? "repeat" : "unique" }));
  // A new xorb starts where a term starts in a xorb not seen before.
  const bounds = [];
  const seen = new Set();
  let at = 0;
  for (const t of r.terms || []) {
    if (!seen.has(t.xorb)) { seen.add(t.xorb); if (at > 0) bounds.push(at); }
    at += t.unpackedBytes;
  }
  const caption = `${num(r.chunks.length)} chunks along ${sbytes(item.bytes.length)}; ${num(fx.repeatedCount)} repeat an earlier chunk (${sbytes(fx.repeatedBytes)}); ${num(seen.size)} xorb${seen.size === 1 ? "" : "s"}.`;
  return chunkStrip({ label: "Chunk map", spans, bounds, legend: { unique: "new chunk", repeat: "repeated chunk" }, caption });
}

function chunkField(c, i) {
  return { name: `chunk ${i}`, offset: c.offset, size: c.length, value: c.hash };
}

function renderChunks(item, route, root, ctx) {
  const chunks = item.result.chunks, fx = item.fx;
  const t = new VTable({
    label: "chunks",
    columns: [
      { label: "#", width: "8ch", align: "right", cell: (_, i) => num(i) },
      { label: "offset", width: "14ch", align: "right", cell: (c) => num(c.offset) },
      { label: "length", width: "9ch", align: "right", cell: (c) => num(c.length) },
      { label: "chunk hash", width: "var(--hashw)", hash: (c) => c.hash, cell: (c) => hashCell(c.hash, { tabbable: false }) },
      { label: "repeat of", width: "10ch", cell: (_, i) => (fx.firstOf[i] >= 0 ? `#${fx.firstOf[i]}` : "") },
    ],
    rowCount: chunks.length,
    row: (i) => chunks[i],
    onSelect: (i) => { ctx.hex.show(item.bytes, [chunkField(chunks[i], i)], { title: `Chunk ${i}` }); ctx.setRow(i); },
    onActivate: (i) => { if (fx.firstOf[i] >= 0) t.select(fx.firstOf[i]); },
  });
  t.mount(root);
  if (route.row >= 0) t.select(route.row);
  else if (chunks.length) ctx.hex.show(item.bytes, [chunkField(chunks[0], 0)], { title: "Chunk 0" });
}

function renderRepeats(item, route, root, ctx) {
  const fx = item.fx, chunks = item.result.chunks;
  if (!fx.repeats.length) {
    put(root, el("p", "No chunk occurs twice in this file."));
    return;
  }
  put(root, el("p.hint", `${num(fx.repeats.length)} chunks occur more than once; the copies after the first (${num(fx.repeatedCount)} chunks, ${fbytes(fx.repeatedBytes)}) are stored once.`));
  const t = new VTable({
    label: "repeated chunks",
    columns: [
      { label: "chunk hash", width: "var(--hashw)", hash: (r) => r.hash, cell: (r) => hashCell(r.hash, { tabbable: false }) },
      { label: "times", width: "7ch", align: "right", cell: (r) => num(r.count) },
      { label: "length", width: "9ch", align: "right", cell: (r) => num(r.length) },
      { label: "first at", width: "9ch", align: "right", cell: (r) => `#${r.first}` },
    ],
    rowCount: fx.repeats.length,
    row: (i) => fx.repeats[i],
    onSelect: (i) => { const r = fx.repeats[i]; ctx.hex.show(item.bytes, [chunkField(chunks[r.first], r.first)], { title: `Chunk ${r.first}` }); },
    onActivate: (i) => ctx.go({ item: item.id, sec: "chunks", row: fx.repeats[i].first }),
  });
  t.mount(root);
}


export function eachHash(item, visit) {
  const r = item.result;
  if (!r) return;
  visit(r.fileHash, "file hash", { sec: "summary" });
  visit(r.sha256, "sha256", { sec: "summary" });
  const ch = r.chunks;
  for (let i = 0; i < ch.length; i++) visit(ch[i].hash, null, i);
  for (const x of r.xorbs || []) if (x.hash) visit(x.hash, "xorb (upload)", { sec: "summary" });
}

export function routeOf(r) {
  return typeof r === "number" ? { sec: "chunks", row: r } : r;
}

/** The label of a hit that eachHash gave as a chunk index. */
export function labelOf(item, r) {
  return `chunk ${r}`;
}

/** Chunks and xorbs for Compare. */
export async function contents(item) {
  await item.processing;
  const chunks = new Map();
  for (const c of item.result?.chunks || []) if (!chunks.has(c.hash)) chunks.set(c.hash, c.length);
  const order = (item.result?.chunks || []).map((c) => [c.hash, c.length]);
  return { chunks, order, xorbs: new Set((item.result?.xorbs || []).map((x) => x.hash).filter(Boolean)), note: "" };
}
