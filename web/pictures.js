// Pictures where people would rather look than read: a strip of a file's
// chunks along its bytes (each chunk as wide as it is long, coloured by
// kind, the xorbs it is stored in marked under it) and the distribution of
// chunk sizes. Each is a figure with a caption that says the same in words.

import { el, num, sbytes } from "./util.js";

const KIND_COLORS = {
  unique: "var(--accent)", repeat: "var(--good)", shared: "var(--good)", only: "var(--accent)",
};

/**
 * A strip of chunks: spans is [{length, kind}] in byte order; bounds are
 * byte offsets where a new xorb starts (drawn as ticks); legend maps each
 * kind shown to its words. The canvas is drawn once, at the width the
 * strip has when it is attached (it scales with the page after).
 */
export function chunkStrip({ label, spans, bounds = [], legend, caption }) {
  const canvas = el("canvas.strip-canvas", { role: "img", "aria-label": `${label}: ${caption}`, height: 36 });
  const fig = el("figure.picture",
    el("figcaption", el("strong", label), " ", caption),
    canvas,
    el("div.picture-legend", { "aria-hidden": "true" }, Object.entries(legend).map(([k, words]) =>
      el("span", el("span.swatch", { style: { background: KIND_COLORS[k] } }), words)),
    bounds.length ? el("span", el("span.swatch.tick"), "xorb boundary") : null));
  requestAnimationFrame(() => draw(canvas, spans, bounds));
  return fig;
}

function draw(canvas, spans, bounds) {
  const css = getComputedStyle(canvas);
  const w = Math.max(100, Math.floor(canvas.clientWidth || canvas.parentElement?.clientWidth || 600));
  const dpr = window.devicePixelRatio || 1;
  canvas.width = w * dpr;
  canvas.height = 36 * dpr;
  const g = canvas.getContext("2d");
  if (!g) return;
  g.scale(dpr, dpr);
  const total = spans.reduce((s, c) => s + c.length, 0) || 1;
  const color = (k) => css.getPropertyValue(k === "repeat" || k === "shared" ? "--good" : "--accent").trim() || "#888";
  let at = 0;
  for (const c of spans) {
    const x0 = (at / total) * w, x1 = ((at + c.length) / total) * w;
    g.fillStyle = color(c.kind);
    g.fillRect(x0, 0, Math.max(0.6, x1 - x0), 26);
    at += c.length;
  }
  g.fillStyle = css.getPropertyValue("--fg").trim() || "#000";
  for (const b of bounds) g.fillRect((b / total) * w - 0.5, 26, 1.5, 10);
}

/** The distribution of chunk sizes, in bins of 8 KiB up to the 128 KiB maximum. */
export function sizeHistogram(lengths) {
  const bins = new Array(17).fill(0); // [0,8K), [8K,16K), …, [128K, ∞)
  for (const n of lengths) bins[Math.min(16, Math.floor(n / 8192))]++;
  const max = Math.max(1, ...bins);
  const W = 340, H = 90, bw = W / bins.length;
  const mean = lengths.length ? lengths.reduce((s, n) => s + n, 0) / lengths.length : 0;
  const caption = `${num(lengths.length)} chunks, ${sbytes(mean)} on average; most ${binLabel(bins.indexOf(max))}.`;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "hist");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Chunk sizes: ${caption}`);
  bins.forEach((count, i) => {
    const h = (count / max) * H;
    const r = document.createElementNS(svg.namespaceURI, "rect");
    r.setAttribute("x", String(i * bw + 1));
    r.setAttribute("y", String(H - h));
    r.setAttribute("width", String(bw - 2));
    r.setAttribute("height", String(Math.max(count ? 1 : 0, h)));
    const t = document.createElementNS(svg.namespaceURI, "title");
    t.textContent = `${num(count)} chunks ${binLabel(i)}`;
    r.append(t);
    svg.append(r);
  });
  return el("figure.picture.hist-fig", el("figcaption", el("strong", "Chunk sizes"), " ", caption), svg,
    el("div.hist-axis", { "aria-hidden": "true" }, el("span", "0"), el("span", "64 KiB"), el("span", "128 KiB+")));
}

function binLabel(i) {
  return i === 16 ? "of 128 KiB" : `between ${i * 8} and ${(i + 1) * 8} KiB`;
}
