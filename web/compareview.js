// Compare two open items: the chunks and xorbs they share and those only one
// has, and the bytes a second upload would not send again.

import { el, put, card, bytesCard, sbytes, num, bytes as fbytes, hashCell, describeError } from "./util.js";
import { VTable } from "./vtable.js";
import { chunkStrip } from "./pictures.js";
import * as shardView from "./shardview.js";
import * as xorbView from "./xorbview.js";
import * as fileView from "./fileview.js";

const sources = { shard: shardView, xorb: xorbView, file: fileView };

/** Opens the dialog that picks two items, then adds the comparison. */
export function openDialog(ctx) {
  const items = ctx.state.items.filter((i) => sources[i.kind]);
  if (items.length < 2) {
    const d = el("dialog.dialog", { "aria-label": "Compare" },
      el("p", "Open at least two shards, xorbs or files to compare them."),
      el("form", { method: "dialog" }, el("button.btn", { type: "submit" }, "OK")));
    document.body.append(d);
    d.addEventListener("close", () => d.remove());
    d.showModal();
    return;
  }
  const cur = ctx.state.route.item;
  const pick = (id, def) => el("select", { id, name: id },
    items.map((it, k) => el("option", { value: it.id, selected: k === def }, `${it.name} (${it.kind})`)));
  const ai = Math.max(0, items.findIndex((i) => i.id === cur));
  const a = pick("cmp-a", ai), b = pick("cmp-b", ai === 0 ? 1 : 0);
  const d = el("dialog.dialog", { "aria-labelledby": "cmp-title" },
    el("form", { method: "dialog" },
      el("h2#cmp-title", "Compare two items"),
      el("label", { for: "cmp-a" }, "First (uploaded first)"), a,
      el("label", { for: "cmp-b" }, "Second"), b,
      el("div.actions",
        el("button.btn.primary", { type: "submit", value: "go" }, "Compare"),
        el("button.btn", { type: "submit", value: "cancel" }, "Cancel"))));
  document.body.append(d);
  d.addEventListener("close", () => {
    const ok = d.returnValue === "go";
    const A = ctx.itemById(a.value), B = ctx.itemById(b.value);
    d.remove();
    if (ok && A && B) compare(ctx, A, B);
  });
  d.showModal();
}

/** Adds a comparison of items A and B. */
export function compare(ctx, A, B) {
  const item = ctx.addItem({ kind: "compare", name: `${A.name} ⇄ ${B.name}`, a: A, b: B }, { select: false });
  init(item, ctx);
  ctx.go({ item: item.id });
  return item;
}

export function init(item, ctx) {
  if (item.running) return;
  item.running = (async () => {
    try {
      const [ca, cb] = await Promise.all([sources[item.a.kind].contents(item.a), sources[item.b.kind].contents(item.b)]);
      item.cmp = diff(ca, cb);
    } catch (err) {
      item.failed = err;
    }
    if (ctx.state.route.item === item.id) ctx.refresh();
  })();
}

// stripCaption says in words what a compare strip shows.
function stripCaption(spans, other) {
  const total = spans.reduce((s, c) => s + c.length, 0);
  const shared = spans.reduce((s, c) => s + (c.kind === "shared" ? c.length : 0), 0);
  return `${sbytes(shared)} of ${sbytes(total)} in chunks that ${other} has too.`;
}

function diff(A, B) {
  const shared = [], onlyA = [], onlyB = [];
  let sharedBytes = 0, onlyABytes = 0, onlyBBytes = 0, aBytes = 0, bBytes = 0;
  for (const [h, n] of A.chunks) {
    aBytes += n;
    if (B.chunks.has(h)) { shared.push([h, n]); sharedBytes += n; } else { onlyA.push([h, n]); onlyABytes += n; }
  }
  for (const [h, n] of B.chunks) {
    bBytes += n;
    if (!A.chunks.has(h)) { onlyB.push([h, n]); onlyBBytes += n; }
  }
  const xs = [...A.xorbs].filter((x) => B.xorbs.has(x));
  return {
    shared, onlyA, onlyB, sharedBytes, onlyABytes, onlyBBytes, aBytes, bBytes,
    sharedXorbs: xs, onlyAXorbs: [...A.xorbs].filter((x) => !B.xorbs.has(x)), onlyBXorbs: [...B.xorbs].filter((x) => !A.xorbs.has(x)),
    notes: [A.note, B.note].filter(Boolean),
    // In file order (plain files): what each shares with the other.
    stripA: A.order?.map(([h, n]) => ({ length: n, kind: B.chunks.has(h) ? "shared" : "only" })),
    stripB: B.order?.map(([h, n]) => ({ length: n, kind: A.chunks.has(h) ? "shared" : "only" })),
  };
}

export function sections(item) {
  const c = item.cmp;
  return [
    { id: "summary", label: "Summary" },
    { id: "shared", label: "Shared chunks", count: c ? c.shared.length : null },
    { id: "onlyA", label: "Only in first", count: c ? c.onlyA.length : null },
    { id: "onlyB", label: "Only in second", count: c ? c.onlyB.length : null },
    { id: "xorbs", label: "Xorbs", count: c ? c.sharedXorbs.length + c.onlyAXorbs.length + c.onlyBXorbs.length : null },
  ];
}

export function exportJSON(item) {
  const c = item.cmp;
  if (!c) throw new Error("still comparing");
  const rows = (l) => l.map(([hash, size]) => ({ hash, size }));
  return {
    first: item.a.name, second: item.b.name,
    sharedChunks: rows(c.shared), onlyFirst: rows(c.onlyA), onlySecond: rows(c.onlyB),
    sharedXorbs: c.sharedXorbs, onlyFirstXorbs: c.onlyAXorbs, onlySecondXorbs: c.onlyBXorbs,
    secondUploadSavesBytes: c.sharedBytes,
  };
}

export function render(item, route, root, ctx) {
  ctx.hex.show(new Uint8Array(0), [], { title: "Nothing to show in bytes for a comparison" });
  if (item.failed) {
    put(root, el("div.error", { role: "alert" }, `Could not compare: ${describeError(item.failed).msg}`));
    return;
  }
  const c = item.cmp;
  if (!c) {
    put(root, el("p.muted", "Comparing… (plain files finish chunking, xorbs are decompressed first)"));
    return;
  }
  const A = item.a.name, B = item.b.name;
  if (route.sec === "shared" || route.sec === "onlyA" || route.sec === "onlyB") {
    const list = c[route.sec];
    const t = new VTable({
      label: route.sec,
      columns: [
        { label: "#", width: "8ch", align: "right", cell: (_, i) => num(i) },
        { label: "chunk hash", width: "var(--hashw)", hash: (r) => r[0], cell: (r) => hashCell(r[0], { tabbable: false }) },
        { label: "bytes", width: "10ch", align: "right", cell: (r) => num(r[1]) },
      ],
      rowCount: list.length,
      row: (i) => list[i],
      empty: "None.",
    });
    t.mount(root);
    return;
  }
  if (route.sec === "xorbs") {
    const rows = [...c.sharedXorbs.map((h) => [h, "both"]), ...c.onlyAXorbs.map((h) => [h, `only ${A}`]), ...c.onlyBXorbs.map((h) => [h, `only ${B}`])];
    const t = new VTable({
      label: "xorbs",
      columns: [
        { label: "xorb hash", width: "var(--hashw)", hash: (r) => r[0], cell: (r) => hashCell(r[0], { tabbable: false }) },
        { label: "in", width: "minmax(12ch, 1fr)", cell: (r) => r[1] },
      ],
      rowCount: rows.length,
      row: (i) => rows[i],
      empty: "No xorbs on either side.",
    });
    t.mount(root);
    return;
  }
  const pct = (n, d) => (d ? `${(100 * n / d).toFixed(1)} %` : "—");
  put(root, 
    el("div.cmp-names", el("div", el("span.badge", "first"), " ", A), el("div", el("span.badge", "second"), " ", B)),
    el("div.cards",
      card("Shared chunks", num(c.shared.length), sbytes(c.sharedBytes)),
      card("Only in first", num(c.onlyA.length), sbytes(c.onlyABytes)),
      card("Only in second", num(c.onlyB.length), sbytes(c.onlyBBytes)),
      card("Shared xorbs", num(c.sharedXorbs.length), `${num(c.onlyAXorbs.length)} only first, ${num(c.onlyBXorbs.length)} only second`)),
    el("div.saving#saving",
      el("strong", "Uploading the second after the first saves "), el("span.save-bytes", fbytes(c.sharedBytes)),
      ` — ${pct(c.sharedBytes, c.bBytes)} of its ${fbytes(c.bBytes)} of distinct chunks; `,
      `it still sends ${fbytes(c.onlyBBytes)}.`),
    el("div.saving",
      el("strong", "The other way round saves "), fbytes(c.sharedBytes), ` — ${pct(c.sharedBytes, c.aBytes)} of the first's ${fbytes(c.aBytes)}.`),
    c.stripA && c.stripB ? el("div.pictures.cmp-strips",
      chunkStrip({ label: A, spans: c.stripA, legend: { shared: "in both", only: "only here" }, caption: stripCaption(c.stripA, B) }),
      chunkStrip({ label: B, spans: c.stripB, legend: { shared: "in both", only: "only here" }, caption: stripCaption(c.stripB, A) })) : null,
    c.notes.length ? el("ul.notes", c.notes.map((n) => el("li.muted", n))) : null,
  );
}

