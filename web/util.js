// Small DOM and formatting helpers shared by the views.

/**
 * el("div.card#x", {onclick, title, ...}, children...) builds an element.
 * Attributes starting with "on" become listeners; "dataset" and "style"
 * objects are merged; null/false children are skipped.
 */
export function el(spec, attrs, ...children) {
  const m = /^([a-z0-9]+)?((?:[.#][\w-]+)*)$/i.exec(spec);
  const node = document.createElement((m && m[1]) || "div");
  if (m && m[2]) {
    for (const part of m[2].match(/[.#][\w-]+/g)) {
      if (part[0] === ".") node.classList.add(part.slice(1));
      else node.id = part.slice(1);
    }
  }
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k === "style" && typeof v === "object") Object.assign(node.style, v);
    else if (k === "text") node.textContent = v;
    else if (k in node && typeof v !== "string") node[k] = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else node.append(c instanceof Node ? c : String(c));
  }
}

const intFmt = new Intl.NumberFormat("en-US");

/** 1234567 → "1,234,567". */
export function num(n) {
  return typeof n === "number" || typeof n === "bigint" ? intFmt.format(n) : String(n ?? "");
}

/** Bytes as "63,527,244 B (60.6 MiB)". */
export function bytes(n) {
  if (n == null) return "";
  if (n < 1024) return `${num(n)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${num(n)} B (${v.toFixed(v < 10 ? 2 : 1)} ${units[u]})`;
}

/** Short bytes: "60.6 MiB". */
export function sbytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

/** Unix seconds → "2025-09-17 21:02:13 UTC". */
export function date(sec) {
  if (!sec) return "not set (0)";
  const d = new Date(sec * 1000);
  if (Number.isNaN(d.getTime())) return `${sec} (out of range)`;
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

let toastTimer = 0;
/** Shows a short message in the status line (aria-live). */
export function toast(msg) {
  const t = document.getElementById("toast");
  if (!t) return;
  t.textContent = msg;
  t.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove("show"), 1800);
}

/** Copies text to the clipboard, with a fallback for pages without permission. */
export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = el("textarea", { style: { position: "fixed", opacity: "0" } }, text);
    document.body.append(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }
  window.__lastCopied = text; // lets the e2e tests read what was copied
  toast(`Copied ${text.length > 20 ? text.slice(0, 16) + "…" : text}`);
}

/**
 * A hash in monospace with a copy button. opts.href makes it a link;
 * opts.onclick too (kept keyboard reachable).
 */
export function hashCell(hash, opts = {}) {
  if (!hash) return el("span.muted", "—");
  const text = opts.href || opts.onclick
    ? el("a.hash", { href: opts.href || "#", title: opts.title || hash, onclick: opts.onclick }, hash)
    : el("span.hash", { title: opts.title || hash }, hash);
  return el("span.hashwrap", text, copyButton(hash, opts.tabbable !== false));
}

/** A small button that copies value. */
export function copyButton(value, tabbable = true) {
  return el("button.copy", {
    type: "button",
    title: "Copy",
    "aria-label": `Copy ${value}`,
    tabindex: tabbable ? null : "-1",
    dataset: { copy: value },
    onclick: (e) => { e.stopPropagation(); e.preventDefault(); copy(value); },
  }, copyIcon());
}

let iconTemplate = null;
function copyIcon() {
  if (!iconTemplate) {
    iconTemplate = document.createElement("template");
    iconTemplate.innerHTML = '<svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false"><rect x="5" y="5" width="9" height="9" rx="1.5" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M11 3.5V3a1 1 0 0 0-1-1H3a1 1 0 0 0-1 1v7a1 1 0 0 0 1 1h.5" fill="none" stroke="currentColor" stroke-width="1.5"/></svg>';
  }
  return iconTemplate.content.firstChild.cloneNode(true);
}

/** Downloads bytes or a string as a file. */
export function download(name, data, type = "application/octet-stream") {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = el("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Key/value definition list: [[label, value], ...]. */
export function kv(rows) {
  return el("dl.kv", rows.filter(Boolean).map(([k, v, cls]) => [
    el("dt", k),
    el("dd" + (cls ? "." + cls : ""), v),
  ]));
}

/** Lets the browser paint before continuing. */
export function nextFrame() {
  return new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
}

/** Resolves when the page is idle (at most a second from now). */
export function idle() {
  return new Promise((r) => (window.requestIdleCallback ? requestIdleCallback(() => r(), { timeout: 1000 }) : setTimeout(r, 0)));
}

/** Error message of anything thrown, plus its byte offset when it has one. */
export function describeError(err) {
  const msg = err && err.message ? err.message : String(err);
  const offset = err && typeof err.offset === "number" ? err.offset : null;
  return { msg, offset, code: err && err.code };
}

/** A summary card: a label, a big value and an optional line under it. */
export function card(label, value, sub) {
  return el("div.card", el("div.card-label", label), el("div.card-value", value), sub ? el("div.card-sub", sub) : null);
}

/** A card for a byte count: "60.6 MiB" with the exact count under it. */
export function bytesCard(label, n, extra) {
  return card(label, sbytes(n), `${num(n)} bytes${extra ? ", " + extra : ""}`);
}

/** Appends the children that are not null or false. */
export function put(parent, ...kids) {
  for (const k of kids.flat()) if (k != null && k !== false) parent.append(k);
  return parent;
}
