// Xorb view: chunk records (compression, sizes, ratio), the footer, and a
// button that decompresses every chunk and checks the chunk hashes and the
// xorb hash.

import { el, put, card, bytesCard, num, bytes as fbytes, hashCell, kv, describeError } from "./util.js";
import { VTable } from "./vtable.js";
import { verifyXorb, mod } from "./xk.js";

const compressionNames = { none: "none", lz4: "LZ4", "bg4-lz4": "ByteGrouping4 + LZ4" };

export function sections(item) {
  const s = [{ id: "records", label: "Chunk records", count: item.parsed.chunks.length }];
  s.push({ id: "footer", label: "Footer" });
  return s;
}

export function exportJSON(item) {
  return item.verified || item.parsed;
}

function summary(item) {
  return item.verified || item.parsed;
}

function ratio(c) {
  return c.uncompressedSize ? (c.compressedSize / c.uncompressedSize) : 0;
}

function hexRecord(item, ctx, i) {
  const c = item.parsed.chunks[i];
  ctx.hex.show(item.bytes, mod().xorbFields(item.bytes, c.offset), { title: `Chunk record ${i}`, focus: c.offset });
}

function hexFooter(item, ctx) {
  const f = item.parsed.footer;
  if (!f) {
    ctx.hex.show(item.bytes, [], { title: "No footer: the records run to the end of the input", focus: Math.max(0, item.bytes.length - 1) });
    return;
  }
  ctx.hex.show(item.bytes, f.layout.slice(0, 600), { title: "CasObjectInfo footer", focus: f.offset });
}

export function render(item, route, root, ctx) {
  if (route.sec === "footer") return renderFooter(item, route, root, ctx);
  const s = summary(item);
  const footerHashes = item.parsed.footer?.hashSection?.hashes || null;
  const verifyBox = el("div.verify", { "aria-live": "polite" });
  const btn = el("button.btn.primary#verify-btn", { type: "button" }, item.verified ? "Verified — run again" : "Decompress and verify");
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    verifyBox.replaceChildren(el("span.muted", "Decompressing and hashing every chunk…"));
    try {
      item.verified = await verifyXorb(item.bytes);
      item.verifyError = null;
    } catch (err) {
      item.verifyError = err;
    }
    btn.disabled = false;
    ctx.refresh();
  });
  drawVerify(item, verifyBox, ctx);
  put(root, 
    el("div.cards",
      card("Chunks", num(s.chunks.length)),
      bytesCard("Stored", s.totalCompressed, "payloads"),
      bytesCard("Unpacked", s.totalUncompressed),
      card("Ratio", s.totalUncompressed ? `${(100 * s.totalCompressed / s.totalUncompressed).toFixed(1)} %` : "—", "stored / unpacked"),
      card("Footer", s.hasFooter ? "yes" : "no", s.hasFooter ? "CasObjectInfo" : "records only (e.g. a prefix)")),
    kv([
      ["Xorb hash (footer)", s.hash ? hashCell(s.hash) : el("span.muted", "no footer")],
      ["Computed xorb hash", s.computedHash ? hashCell(s.computedHash) : el("span.muted", "not yet: press the button")],
    ]),
    el("div.actions", btn, verifyBox),
  );
  const t = new VTable({
    label: "chunk records",
    columns: [
      { label: "#", width: "6ch", align: "right", cell: (_, i) => i },
      { label: "offset", width: "11ch", align: "right", cell: (c) => num(c.offset) },
      { label: "compression", width: "19ch", cell: (c) => compressionNames[c.compression] || c.compression },
      { label: "stored", width: "9ch", align: "right", cell: (c) => num(c.compressedSize) },
      { label: "unpacked", width: "9ch", align: "right", cell: (c) => num(c.uncompressedSize) },
      { label: "ratio", width: "8ch", align: "right", cell: (c) => `${(100 * ratio(c)).toFixed(1)}%` },
      { label: "chunk hash", width: "var(--hashw)", hash: (c) => c.hash || "", cell: (c) => (c.hash ? hashCell(c.hash, { tabbable: false }) : "—") },
      {
        label: "check", width: "9ch", cell: (c, i) => {
          if (!c.hash) return "";
          if (!footerHashes) return "hashed";
          return footerHashes[i] === c.hash ? el("span.good", "✓ match") : el("span.bad", "✗ differs");
        },
      },
    ],
    rowCount: s.chunks.length,
    row: (i) => s.chunks[i],
    onSelect: (i) => { hexRecord(item, ctx, i); ctx.setRow(i); },
  });
  t.mount(root);
  if (route.row >= 0 && route.row < s.chunks.length) t.select(route.row);
  else if (s.chunks.length) hexRecord(item, ctx, 0);
}

function drawVerify(item, box, ctx) {
  if (item.verifyError) {
    const e = describeError(item.verifyError);
    box.replaceChildren(el("span.bad", { role: "alert" }, `Verification failed: ${e.msg}`), e.offset != null ? el("a.offset", {
      href: "#",
      onclick: (ev) => { ev.preventDefault(); ctx.hex.show(item.bytes, [{ name: "error here", offset: e.offset, size: 1 }], { title: "Where verification failed", focus: e.offset }); },
    }, ` byte ${num(e.offset)}`) : "");
    return;
  }
  const v = item.verified;
  if (!v) return;
  const fh = item.parsed.footer?.hashSection?.hashes;
  let bad = 0;
  if (fh) v.chunks.forEach((c, i) => { if (fh[i] !== c.hash) bad++; });
  const parts = [`All ${num(v.chunks.length)} chunks decompressed and hashed.`];
  if (fh) parts.push(bad ? ` ${bad} chunk hashes differ from the footer.` : " Every chunk hash matches the footer.");
  if (v.hash) parts.push(v.hash === v.computedHash ? " Xorb hash matches the footer." : " Xorb hash DIFFERS from the footer.");
  else parts.push(" No footer to check the xorb hash against.");
  const ok = !bad && (!v.hash || v.hash === v.computedHash);
  box.replaceChildren(el(ok ? "span.good" : "span.bad", { dataset: { verified: ok ? "ok" : "bad" } }, parts.join("")));
}

function renderFooter(item, route, root, ctx) {
  const f = item.parsed.footer;
  if (!f) {
    put(root, el("p", "No footer: these are chunk records only (for example the first records of a xorb). Verify computes the xorb hash these chunks would have."));
    hexFooter(item, ctx);
    return;
  }
  put(root, kv([
    ["Ident", `${f.ident} v${f.version}`],
    ["Xorb hash", hashCell(f.hash)],
    ["Offset", num(f.offset)],
    ["Hash section", `${f.hashSection.ident} v${f.hashSection.version}, ${num(f.hashSection.numChunks)} hashes @${num(f.hashSection.offset)}`],
    ["Boundary section", `${f.boundarySection.ident} v${f.boundarySection.version}, ${num(f.boundarySection.numChunks)} entries @${num(f.boundarySection.offset)}`],
    ["Trailer", `${num(f.trailer.numChunks)} chunks; hashes ${num(f.trailer.hashesSectionOffsetFromEnd)} and boundaries ${num(f.trailer.boundarySectionOffsetFromEnd)} bytes from the end`],
    ["Info length", `${num(f.infoLength)} @${num(f.infoLengthOffset)}`],
  ]));
  const hs = f.hashSection.hashes, bs = f.boundarySection;
  put(root, el("h3", "Footer chunk table"));
  const t = new VTable({
    label: "footer chunks",
    columns: [
      { label: "#", width: "6ch", align: "right", cell: (_, i) => i },
      { label: "chunk hash", width: "var(--hashw)", hash: (i) => hs[i], cell: (i) => hashCell(hs[i], { tabbable: false }) },
      { label: "record end", width: "12ch", align: "right", cell: (i) => num(bs.chunkBoundaryOffsets[i]) },
      { label: "unpacked end", width: "13ch", align: "right", cell: (i) => num(bs.unpackedChunkOffsets[i]) },
    ],
    rowCount: hs.length,
    row: (i) => i,
  });
  t.mount(root);
  hexFooter(item, ctx);
}


export function eachHash(item, visit) {
  const s = summary(item);
  if (s.hash) visit(s.hash, "xorb hash (footer)", { sec: "records" });
  if (s.computedHash && s.computedHash !== s.hash) visit(s.computedHash, "computed xorb hash", { sec: "records" });
  const fh = item.parsed.footer?.hashSection?.hashes || [];
  fh.forEach((h, i) => visit(h, `footer chunk ${i}`, { sec: "records", row: i }));
  if (s !== item.parsed || !fh.length) s.chunks.forEach((c, i) => { if (c.hash && c.hash !== fh[i]) visit(c.hash, `chunk ${i}`, { sec: "records", row: i }); });
}

export function routeOf(r) { return r; }

/** Chunks and xorbs for Compare; hashes need verification without a footer. */
export async function contents(item) {
  if (!item.verified) {
    try { item.verified = await verifyXorb(item.bytes); } catch (err) { item.verifyError = err; }
  }
  const s = summary(item);
  const chunks = new Map();
  const fh = item.parsed.footer?.hashSection?.hashes;
  s.chunks.forEach((c, i) => {
    const h = c.hash || (fh && fh[i]);
    if (h && !chunks.has(h)) chunks.set(h, c.uncompressedSize);
  });
  const xorbs = new Set([s.hash || s.computedHash].filter(Boolean));
  return { chunks, xorbs, note: s.hash ? "" : "no footer: the xorb hash is the one computed from these chunks" };
}
