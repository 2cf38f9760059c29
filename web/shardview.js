// Shard view: summary, header, footer, files and their terms, xorbs and
// their chunks, every chunk, lookup tables, findings; each selection shows
// its bytes in the hex view.

import { el, put, card, bytesCard, sbytes, num, bytes as fbytes, date, hashCell, kv, describeError, nextFrame, idle } from "./util.js";
import { VTable } from "./vtable.js";
import { rowCount, chunkAt, allHashes, unpacked } from "./chunkrows.js";
import { mod } from "./xk.js";

const ZERO = "0".repeat(64);

/**
 * Prepares the indexes the views need and, when the module checks the rules
 * separately from parsing, starts that check.
 */
export function init(item, ctx) {
  if (item.kind !== "shard") return;
  prepare(item);
  if (item.parsed.findings == null && item.validate) {
    // Findings come after the first screen: validate once the frame that
    // draws it (init runs just before) has been painted and the page is idle.
    item.parsed.findings = [];
    item.checking = true;
    item.findingsReady = nextFrame().then(idle).then(async () => {
      try {
        item.parsed.findings = (await item.validate()) || [];
      } catch (err) {
        const e = describeError(err);
        item.parsed.findings = [{ severity: "error", offset: e.offset ?? 0, section: "shard", message: `validation failed: ${e.msg}` }];
      }
      item.checking = false;
      if (item.closed || ctx.state.route.item !== item.id) return;
      // redraw only views that show findings; elsewhere (a table being scrolled) just count them
      if (["summary", "findings"].includes(ctx.state.route.sec)) ctx.refresh();
      else document.querySelector('.sec[data-sec="findings"]')?.append(el("span.count", num(item.parsed.findings.length)));
    });
  }
}

export function prepare(item) {
  const p = item.parsed;
  const xorbs = p.xorbs || [];
  const starts = new Float64Array(xorbs.length + 1); // first global chunk row of each xorb
  if (p.chunkRows) starts.set(p.chunkRows.xorbStart);
  else for (let i = 0; i < xorbs.length; i++) starts[i + 1] = starts[i] + (xorbs[i].chunks?.length ?? 0);
  const xorbIndex = new Map();
  xorbs.forEach((x, i) => { if (!xorbIndex.has(x.hash)) xorbIndex.set(x.hash, i); });
  let materialized = 0, terms = 0;
  for (const f of p.files || []) { materialized += f.unpackedBytes; terms += f.numEntries; }
  let inXorbs = 0, onDisk = 0;
  for (const x of xorbs) { inXorbs += x.bytesInXorb; onDisk += x.bytesOnDisk; }
  const key = p.footer?.chunkHashKey;
  const keyed = !!key && key !== ZERO;
  const form = !p.footer ? "upload" : (p.files || []).length === 0 ? "dedupe" : "stored";
  item.sx = { starts, chunks: starts[xorbs.length], xorbIndex, materialized, terms, inXorbs, onDisk, keyed, form };
}

/** The section of the shard named name (as the module lists them), or undefined. */
function section(item, name) {
  return item.parsed.sections.find((s) => s.name === name);
}

const formText = {
  upload: "upload form (no footer): what a client sends to the shard upload API",
  stored: "stored shard (with footer)",
  dedupe: "dedupe response (no files, only xorbs to deduplicate against)",
};

export function sections(item) {
  if (item.kind === "bad-shard") return [{ id: "error", label: "Error" }];
  const p = item.parsed;
  const lk = p.lookups || {};
  const nLookups = (lk.files?.length || 0) + (lk.xorbs?.length || 0) + (lk.chunks?.length || 0);
  return [
    { id: "summary", label: "Summary" },
    { id: "header", label: "Header" },
    { id: "footer", label: "Footer" },
    { id: "files", label: "Files", count: p.files.length },
    { id: "file", label: "File", hidden: true, parent: "files" },
    { id: "xorbs", label: "Xorbs", count: p.xorbs.length },
    { id: "xorb", label: "Xorb", hidden: true, parent: "xorbs" },
    { id: "chunks", label: "Chunks", count: item.sx.chunks },
    { id: "lookups", label: "Lookup tables", count: nLookups },
    { id: "findings", label: "Findings", count: item.checking ? null : (p.findings || []).length },
  ];
}

export async function exportJSON(item) {
  await item.findingsReady;
  if (item.kind === "bad-shard") {
    const e = describeError(item.error);
    return { error: e.msg, offset: e.offset };
  }
  return unpacked(item.parsed);
}

// --- hex selections: the module reads the fields of what is selected ------

function showHex(item, ctx, title, selection, focus) {
  ctx.hex.show(item.bytes, mod().shardFields(item.bytes, selection), { title, focus });
}

function hexHeader(item, ctx) {
  showHex(item, ctx, "Header", { part: "header" });
}

function hexFooter(item, ctx) {
  if (!item.parsed.footer) return ctx.hex.show(item.bytes, [], { title: "No footer (upload form): the shard ends after the CAS bookend", focus: item.bytes.length - 1 });
  showHex(item, ctx, "Footer", { part: "footer" });
}

function hexFile(item, ctx, i) {
  showHex(item, ctx, `File ${i}`, { part: "file", at: item.parsed.files[i].offset });
}

function hexTerm(item, ctx, i, j) {
  showHex(item, ctx, `File ${i}, term ${j}`, { part: "term", at: item.parsed.files[i].offset, index: j });
}

function hexXorb(item, ctx, i) {
  showHex(item, ctx, `Xorb ${i}`, { part: "xorb", at: item.parsed.xorbs[i].offset });
}

function hexChunk(item, ctx, i, c) {
  showHex(item, ctx, `Xorb ${i}, chunk ${c}`, { part: "chunk", at: item.parsed.xorbs[i].offset, index: c });
}

const lookupKinds = {
  files: { part: "fileLookup", title: "File lookup" },
  xorbs: { part: "casLookup", title: "Xorb (CAS) lookup" },
  chunks: { part: "chunkLookup", title: "Chunk lookup" },
};

function hexLookup(item, ctx, kind, i) {
  const k = lookupKinds[kind];
  showHex(item, ctx, `${k.title} entry ${i}`, { part: k.part, index: i });
}

/** Finds the structure that holds byte offset o and selects it. */
export function locate(item, o) {
  const p = item.parsed;
  const inside = (name) => { const s = section(item, name); return !!s && o >= s.offset && o < s.offset + s.size; };
  if (inside("header")) return { sec: "header" };
  if (inside("files")) {
    const i = upper(p.files, o, (f) => f.offset);
    if (i >= 0) {
      const j = mod().shardEntryAt(p.files[i].offset, o);
      if (j >= 0 && j < p.files[i].entries.length) return { sec: "file", sel: i, row: j };
      return { sec: "file", sel: i };
    }
  }
  if (inside("cas")) {
    const i = upper(p.xorbs, o, (x) => x.offset);
    if (i >= 0) {
      const c = mod().shardEntryAt(p.xorbs[i].offset, o);
      if (c >= 0 && c < rowCount(p, i)) return { sec: "chunks", row: item.sx.starts[i] + c };
      return { sec: "xorbs", row: i };
    }
  }
  if (p.footer && inside("footer")) return { sec: "footer" };
  if (["fileLookup", "casLookup", "chunkLookup"].some(inside)) return { sec: "lookups" };
  return { sec: "summary" };
}

function upper(arr, o, key) {
  let lo = 0, hi = arr.length - 1, ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (key(arr[mid]) <= o) { ans = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return ans;
}

// --- rendering ---------------------------------------------------------------

export function render(item, route, root, ctx) {
  if (item.kind === "bad-shard") return renderError(item, root, ctx);
  const r = renderers[route.sec] || renderers.summary;
  r(item, route, root, ctx);
  if (route.off != null && route.off >= 0 && route.off < item.bytes.length) {
    // a finding's place: its byte, marked inside the structure that holds it
    const around = ctx.hex.bytes === item.bytes ? ctx.hex.fields : [];
    ctx.hex.show(item.bytes, [...around, { name: "finding here", offset: route.off, size: 1, value: `byte ${route.off}` }],
      { title: `Finding at byte ${num(route.off)}${around.length ? " in " + ctx.hex.titleText : ""}`, focus: route.off });
  }
}

function renderError(item, root, ctx) {
  const e = describeError(item.error);
  const at = e.offset != null ? e.offset : null;
  put(root, el("div.error.big", { role: "alert" },
    el("strong", "This looks like a shard but cannot be read. "),
    el("span.errmsg", e.msg),
    at != null ? el("div", "Problem at ", el("a.offset", {
      href: "#", onclick: (ev) => { ev.preventDefault(); focusOffset(item, ctx, at); },
    }, `byte offset ${num(at)}`), ` of ${num(item.bytes.length)}.`) : null),
  el("div.actions", el("button.btn", {
    type: "button",
    onclick: () => ctx.openBytes(item.name + " (as file)", item.bytes, { as: "file" }),
  }, "Open as a plain file instead")));
  focusOffset(item, ctx, at ?? 0);
}

function focusOffset(item, ctx, at) {
  const start = Math.max(0, Math.min(at, item.bytes.length - 1));
  ctx.hex.show(item.bytes, item.bytes.length ? [{ name: "error here", offset: start, size: 1, value: `byte ${at}` }] : [], { title: "Where reading stopped", focus: start });
}


const renderers = {
  summary(item, route, root, ctx) {
    const p = item.parsed, sx = item.sx;
    const sev = {};
    for (const f of p.findings || []) sev[f.severity] = (sev[f.severity] || 0) + 1;
    put(root, 
      el("div.form-line", { dataset: { form: sx.form } }, el("strong", "Form: "), formText[sx.form], sx.keyed ? " — chunk hashes are keyed (HMAC) with the footer's key" : ""),
      el("div.cards",
        card("Files", num(p.files.length), `${num(sx.terms)} term${sx.terms === 1 ? "" : "s"}`),
        card("Xorbs", num(p.xorbs.length)),
        card("Chunks", num(sx.chunks)),
        bytesCard("File bytes", sx.materialized, "sum of terms"),
        bytesCard("Xorb bytes", sx.inXorbs, `${sbytes(sx.onDisk)} on disk`),
        bytesCard("Shard size", item.bytes.length),
        item.checking ? card("Findings", "…", "checking the rules")
          : card("Findings", num((p.findings || []).length),
            Object.entries(sev).map(([k, v]) => `${v} ${k}${v > 1 ? "s" : ""}`).join(", ") || "none")),
    );
    if ((p.findings || []).length) put(root, findingsTable(item, ctx, 6));
    hexHeader(item, ctx);
  },

  header(item, route, root, ctx) {
    const h = item.parsed.header;
    put(root, kv([
      ["App id", h.appId],
      ["Version", num(h.version)],
      ["Footer size", `${num(h.footerSize)}${h.footerSize === 0 ? " (no footer: upload form)" : ""}`],
    ]));
    hexHeader(item, ctx);
  },

  footer(item, route, root, ctx) {
    const f = item.parsed.footer;
    if (!f) {
      put(root, el("p", "No footer: this shard is in upload form (footer size 0). Upload-form shards end at the CAS info bookend."));
      hexFooter(item, ctx);
      return;
    }
    const now = Date.now() / 1000;
    const expiry = !f.keyExpiry ? "no expiry set"
      : f.keyExpiry < now ? `expired ${ago(now - f.keyExpiry)} ago` : `valid for ${ago(f.keyExpiry - now)}`;
    const lk = item.parsed.lookups || {};
    put(root, kv([
      ["Version", num(f.version)],
      ["Created", date(f.createdAt), "createdAt"],
      ["Key expiry", el("span", date(f.keyExpiry), " — ", el("strong.expiry", expiry)), "keyExpiry"],
      ["Chunk hash key", el("span", hashCell(f.chunkHashKey), el("div.muted", item.sx.keyed
        ? "non-zero: chunk hashes in this shard are keyed with it (dedupe response)"
        : "zero: chunk hashes are plain"))],
      ["File info offset", num(f.fileInfoOffset)],
      ["CAS info offset", num(f.casInfoOffset)],
      ["Footer offset", num(f.footerOffset)],
      ["Lookup entries", `files ${num(lk.files?.length || 0)}, xorbs ${num(lk.xorbs?.length || 0)}, chunks ${num(lk.chunks?.length || 0)}`],
      ["Stored bytes on disk", fbytes(f.storedBytesOnDisk)],
      ["Materialized bytes", fbytes(f.materializedBytes)],
      ["Stored bytes", fbytes(f.storedBytes)],
    ]));
    hexFooter(item, ctx);
  },

  files(item, route, root, ctx) {
    blockList(item, route, root, ctx, {
      label: "files", sec: "file", rows: item.parsed.files, hex: hexFile, first: () => hexFile0(item, ctx),
      empty: "No files: a dedupe response or a shard of xorbs only.", hint: "Enter or click opens a file's terms.",
      columns: [
        { label: "#", width: "5ch", align: "right", cell: (_, i) => i },
        { label: "file hash", width: "var(--hashw)", hash: (f) => f.hash, cell: (f) => hashCell(f.hash, { tabbable: false }) },
        { label: "terms", width: "8ch", align: "right", cell: (f) => num(f.numEntries) },
        { label: "bytes", width: "14ch", align: "right", cell: (f) => num(f.unpackedBytes) },
        { label: "verification", width: "12ch", cell: (f) => (f.verification ? "yes" : "no") },
        { label: "sha256", width: "var(--hashw)", cell: (f) => (f.sha256 ? hashCell(f.sha256, { tabbable: false }) : "—") },
      ],
    });
  },

  file(item, route, root, ctx) {
    const i = route.sel | 0;
    const f = item.parsed.files[i];
    if (!f) { put(root, el("p.error", `No file ${i} in this shard.`)); return; }
    const sx = item.sx;
    put(root, 
      el("div.crumbs", el("a", { href: "#", onclick: (e) => { e.preventDefault(); ctx.go({ item: item.id, sec: "files", row: i }); } }, "← files"), ` / file ${i}`),
      kv([
        ["File hash", hashCell(f.hash)],
        ["Flags", mod().shardFlags("file", f.flags)],
        ["Terms", num(f.numEntries)],
        ["Bytes", fbytes(f.unpackedBytes)],
        ["SHA-256", f.sha256 ? hashCell(f.sha256) : "none (no metadata ext)"],
        ["Verification", f.verification ? `${num(f.verification.length)} range hash${f.verification.length === 1 ? "" : "es"}` : "none"],
      ]),
    );
    const t = new VTable({
      label: "terms",
      columns: [
        { label: "#", width: "5ch", align: "right", cell: (_, j) => j },
        {
          label: "xorb", width: "var(--hashw)", hash: (e) => e.xorbHash,
          cell: (e) => {
            const xi = sx.xorbIndex.get(e.xorbHash);
            return xi == null ? hashCell(e.xorbHash, { tabbable: false, title: "not in this shard" })
              : hashCell(e.xorbHash, { tabbable: false, title: `xorb ${xi} in this shard`, href: `#item=${encodeURIComponent(item.id)}&sec=xorb&sel=${xi}` });
          },
        },
        { label: "chunks", width: "14ch", cell: (e) => `[${e.chunkStart}, ${e.chunkEnd})` },
        { label: "n", width: "6ch", align: "right", cell: (e) => num(e.chunkEnd - e.chunkStart) },
        { label: "bytes", width: "12ch", align: "right", cell: (e) => num(e.unpackedBytes) },
        { label: "verification hash", width: "var(--hashw)", cell: (_, j) => (f.verification ? hashCell(f.verification[j], { tabbable: false }) : "—") },
      ],
      rowCount: f.entries.length,
      row: (j) => f.entries[j],
      clickActivates: false,
      onSelect: (j) => { hexTerm(item, ctx, i, j); ctx.setRow(j); },
      onActivate: (j) => {
        const xi = sx.xorbIndex.get(f.entries[j].xorbHash);
        if (xi != null) ctx.go({ item: item.id, sec: "xorb", sel: xi, row: f.entries[j].chunkStart });
      },
    });
    put(root, el("h3", "Terms ", el("span.hint", "(Enter on a term, or its xorb link, opens that xorb's chunks)")));
    mountTable(t, root, route);
    if (!(route.row >= 0)) hexFile(item, ctx, i);
  },

  xorbs(item, route, root, ctx) {
    const xorbs = item.parsed.xorbs;
    blockList(item, route, root, ctx, {
      label: "xorbs", sec: "xorb", rows: xorbs, hex: hexXorb, first: () => xorbs.length && hexXorb(item, ctx, 0),
      empty: "No xorbs.", hint: "Enter or click opens a xorb's chunks.",
      columns: [
        { label: "#", width: "5ch", align: "right", cell: (_, i) => i },
        { label: "xorb hash", width: "var(--hashw)", hash: (x) => x.hash, cell: (x) => hashCell(x.hash, { tabbable: false }) },
        { label: "chunks", width: "9ch", align: "right", cell: (_, i) => num(rowCount(item.parsed, i)) },
        { label: "bytes in xorb", width: "14ch", align: "right", cell: (x) => num(x.bytesInXorb) },
        { label: "bytes on disk", width: "14ch", align: "right", cell: (x) => num(x.bytesOnDisk) },
        { label: "flags", width: "12ch", cell: (x) => mod().shardFlags("xorb", x.flags) },
      ],
    });
  },

  xorb(item, route, root, ctx) {
    const i = route.sel | 0;
    const x = item.parsed.xorbs[i];
    if (!x) { put(root, el("p.error", `No xorb ${i} in this shard.`)); return; }
    put(root, 
      el("div.crumbs", el("a", { href: "#", onclick: (e) => { e.preventDefault(); ctx.go({ item: item.id, sec: "xorbs", row: i }); } }, "← xorbs"), ` / xorb ${i}`),
      kv([
        ["Xorb hash", hashCell(x.hash)],
        ["Chunks", num(rowCount(item.parsed, i))],
        ["Bytes in xorb", fbytes(x.bytesInXorb)],
        ["Bytes on disk", fbytes(x.bytesOnDisk)],
        ["Flags", mod().shardFlags("xorb", x.flags)],
      ]),
      el("h3", "Chunks"),
    );
    const t = chunkTable(item, ctx, rowCount(item.parsed, i), (c) => [i, c], false);
    t.onSelect = (c) => { hexChunk(item, ctx, i, c); ctx.setRow(c); };
    mountTable(t, root, route);
    if (!(route.row >= 0)) hexXorb(item, ctx, i);
  },

  chunks(item, route, root, ctx) {
    const sx = item.sx;
    const starts = sx.starts;
    const xorbs = item.parsed.xorbs;
    const at = (g) => { const xi = upper(starts, g, (v) => v) ; return [Math.min(xi, xorbs.length - 1), g - starts[Math.min(xi, xorbs.length - 1)]]; };
    const t = chunkTable(item, ctx, sx.chunks, at, true);
    t.onSelect = (g) => { const [xi, c] = at(g); hexChunk(item, ctx, xi, c); ctx.setRow(g); };
    put(root, el("p.hint", `All ${num(sx.chunks)} chunks of all xorbs, in order. ${sx.keyed ? "Hashes are keyed with the footer's chunk hash key." : ""}`));
    mountTable(t, root, route);
  },

  lookups(item, route, root, ctx) {
    const lk = item.parsed.lookups || { files: [], xorbs: [], chunks: [] };
    if (!item.parsed.footer) {
      put(root, el("p", "No lookup tables: upload-form shards carry none."));
      return;
    }
    const box = el("div.lookups");
    put(root, box);
    for (const kind of ["files", "xorbs", "chunks"]) {
      const rows = lk[kind] || [];
      const keys = rows.length ? Object.keys(rows[0]) : [];
      box.append(el("h3", `${lookupKinds[kind].title} table `, el("span.muted", `${num(rows.length)} entries`)));
      if (!rows.length) { box.append(el("p.muted", "empty")); continue; }
      const t = new VTable({
        label: `${kind} lookup`,
        columns: [{ label: "#", width: "8ch", align: "right", cell: (_, i) => i },
          ...keys.map((k) => ({ label: k, width: /trunc/i.test(k) ? "24ch" : "10ch", align: "right", cell: (r) => String(r[k]) }))],
        rowCount: rows.length,
        row: (i) => rows[i],
        onSelect: (i) => hexLookup(item, ctx, kind, i),
        onActivate: (i) => {
          const r = rows[i];
          if (kind === "files" ? r.file < 0 : r.xorb < 0) return; // the entry starts no block: nothing to open
          if (kind === "files") ctx.go({ item: item.id, sec: "file", sel: r.file });
          else if (kind === "xorbs") ctx.go({ item: item.id, sec: "xorb", sel: r.xorb });
          else ctx.go({ item: item.id, sec: "xorb", sel: r.xorb, row: r.chunk });
        },
      });
      t.root.classList.add("short");
      t.mount(box);
    }
    if (lk.files?.length) hexLookup(item, ctx, "files", 0);
    else hexFooter(item, ctx);
  },

  findings(item, route, root, ctx) {
    const fs = item.parsed.findings || [];
    if (item.checking) put(root, el("p.muted", "Checking the rules…"));
    else if (!fs.length) put(root, el("p.ok", "No findings: the validator found nothing wrong."));
    else put(root, findingsTable(item, ctx));
    hexHeader(item, ctx);
  },
};

/**
 * The table of the shard's files or xorbs: selecting a row shows its
 * bytes, Enter or a click opens it (route sec, sel); first() shows bytes
 * before any row is selected.
 */
function blockList(item, route, root, ctx, { label, sec, rows, hex, first, empty, hint, columns }) {
  const t = new VTable({
    label, columns, empty,
    rowCount: rows.length,
    row: (i) => rows[i],
    onSelect: (i) => { hex(item, ctx, i); ctx.setRow(i); },
    onActivate: (i) => ctx.go({ item: item.id, sec, sel: i }),
  });
  put(root, el("p.hint", hint));
  mountTable(t, root, route);
  if (!(route.row >= 0)) first();
}

function hexFile0(item, ctx) {
  if (item.parsed.files.length) hexFile(item, ctx, 0);
  else hexHeader(item, ctx);
}

function chunkTable(item, ctx, count, at, global) {
  const xorbs = item.parsed.xorbs;
  const cols = [{ label: "#", width: "9ch", align: "right", cell: (_, g) => num(g) }];
  if (global) {
    cols.push({ label: "xorb", width: "6ch", align: "right", cell: (_, g) => at(g)[0] });
    cols.push({ label: "in xorb", width: "8ch", align: "right", cell: (_, g) => at(g)[1] });
  }
  const chunk = (g) => { const [xi, c] = at(g); return chunkAt(item.parsed, xi, c); };
  cols.push(
    { label: "chunk hash", width: "var(--hashw)", hash: (c) => c.hash, cell: (c) => hashCell(c.hash, { tabbable: false }) },
    { label: "offset", width: "12ch", align: "right", cell: (c) => num(c.byteRangeStart) },
    { label: "size", width: "9ch", align: "right", cell: (c) => num(c.unpackedBytes) },
    { label: "flags", width: "16ch", cell: (c) => mod().shardFlags("chunk", c.flags) },
  );
  return new VTable({ label: global ? "all chunks" : "chunks", columns: cols, rowCount: count, row: chunk, empty: "No chunks." });
}

function findingsTable(item, ctx, limit) {
  const fs = item.parsed.findings || [];
  const shown = limit ? fs.slice(0, limit) : fs;
  const list = el("ol.findings", { "aria-label": "findings" }, shown.map((f) => el("li.finding.sev-" + f.severity,
    el("span.sev", f.severity),
    el("span.fsec", f.section),
    el("a.offset", {
      href: "#",
      title: "show this place",
      onclick: (e) => { e.preventDefault(); goOffset(item, ctx, f.offset); },
    }, `@${num(f.offset)}`),
    el("span.fmsg", f.message))));
  return el("div.findings-box", el("h3", "Findings"), list,
    limit && fs.length > limit ? el("p.muted", `and ${fs.length - limit} more in Findings`) : null);
}

/** Navigates to the structure holding offset o and outlines that byte. */
function goOffset(item, ctx, o) {
  const loc = locate(item, o);
  ctx.go({ item: item.id, ...loc, off: o });
}

function mountTable(t, root, route) {
  t.mount(root);
  if (route.row >= 0 && route.row < t.count) t.select(route.row);
  return t;
}

function ago(s) {
  const d = s / 86400;
  if (d >= 2) return `${Math.round(d)} days`;
  const h = s / 3600;
  if (h >= 2) return `${Math.round(h)} hours`;
  return `${Math.max(1, Math.round(s / 60))} minutes`;
}

/** Visits every hash for Find: visit(hash, label, route). */
export function eachHash(item, visit) {
  if (item.kind !== "shard") return;
  const p = item.parsed;
  p.files.forEach((f, i) => {
    visit(f.hash, `file ${i}`, { sec: "file", sel: i });
    if (f.sha256) visit(f.sha256, `file ${i} sha256`, { sec: "file", sel: i });
    f.entries.forEach((e, j) => {
      visit(e.xorbHash, `file ${i} term ${j} xorb`, { sec: "file", sel: i, row: j });
      if (f.verification) visit(f.verification[j], `file ${i} term ${j} verification`, { sec: "file", sel: i, row: j });
    });
  });
  const starts = item.sx.starts;
  for (let i = 0; i < p.xorbs.length; i++) {
    const x = p.xorbs[i];
    visit(x.hash, `xorb ${i}`, { sec: "xorb", sel: i });
  }
  // chunks: no label string per row (a million of them per keystroke); labelOf names a hit
  const hs = allHashes(p);
  for (let g = 0; g < hs.length; g++) visit(hs[g], null, g);
  if (p.footer && p.footer.chunkHashKey !== ZERO) visit(p.footer.chunkHashKey, "footer chunk hash key", { sec: "footer" });
}

/** The label of a hit that eachHash gave as a global chunk row. */
export function labelOf(item, r) {
  const xi = upper(item.sx.starts, r, (v) => v);
  return `xorb ${xi} chunk ${r - item.sx.starts[xi]}`;
}

/** Routes for eachHash's numeric shorthand (a global chunk row). */
export function routeOf(r) {
  return typeof r === "number" ? { sec: "chunks", row: r } : r;
}

/** Chunks and xorbs for Compare. */
export function contents(item) {
  const chunks = new Map(), xorbs = new Set();
  const p = item.parsed, hs = allHashes(p);
  let g = 0;
  p.xorbs.forEach((x, i) => {
    xorbs.add(x.hash);
    for (let c = 0, n = rowCount(p, i); c < n; c++, g++) {
      if (!chunks.has(hs[g])) chunks.set(hs[g], p.chunkRows ? p.chunkRows.unpackedBytes[g] : x.chunks[c].unpackedBytes);
    }
  });
  for (const f of item.parsed.files) for (const e of f.entries) xorbs.add(e.xorbHash);
  return { chunks, xorbs, note: item.sx.keyed ? "chunk hashes in this shard are keyed, so they only match other keyed hashes" : "" };
}
