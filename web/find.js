// Find: any hash or hash prefix across everything open. With no match it
// offers the nearest hashes by edit distance (to the query, against each
// hash's beginning, so a typo in a prefix still finds its hash).

import { el, num } from "./util.js";
import * as shardView from "./shardview.js";
import * as xorbView from "./xorbview.js";
import * as fileView from "./fileview.js";

const sources = { shard: shardView, xorb: xorbView, file: fileView };
const MAX_SHOWN = 50;
const NEAREST = 5;

export function setupFind(ctx) {
  const input = document.getElementById("find-input");
  const box = document.getElementById("find-results");
  let timer = 0, token = 0;

  const done = (q) => { box.dataset.query = q; };
  const close = () => { box.hidden = true; input.setAttribute("aria-expanded", "false"); };
  const open = () => { box.hidden = false; input.setAttribute("aria-expanded", "true"); };

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => run(), 120);
  });
  input.addEventListener("focus", () => { if (box.childElementCount && input.value.trim()) open(); });
  input.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown") { e.preventDefault(); box.querySelector("button")?.focus(); }
    else if (e.key === "Enter") {
      e.preventDefault();
      clearTimeout(timer);
      run().then(() => box.querySelector("button.hit")?.click());
    } else if (e.key === "Escape") { close(); }
  });
  box.addEventListener("keydown", (e) => {
    const btns = [...box.querySelectorAll("button")];
    const k = btns.indexOf(document.activeElement);
    if (e.key === "ArrowDown") { e.preventDefault(); btns[Math.min(btns.length - 1, k + 1)]?.focus(); }
    else if (e.key === "ArrowUp") { e.preventDefault(); if (k <= 0) input.focus(); else btns[k - 1].focus(); }
    else if (e.key === "Escape") { close(); input.focus(); }
  });
  document.addEventListener("click", (e) => {
    if (!e.target.closest(".find")) close();
  });

  async function run() {
    const my = ++token;
    const q = input.value.trim().toLowerCase().replace(/\s+/g, "");
    if (!q) { box.replaceChildren(); delete box.dataset.query; close(); return; }
    if (!/^[0-9a-f]+$/.test(q)) {
      box.replaceChildren(el("div.find-msg", "Hashes are hexadecimal: 0–9 and a–f."));
      open();
      done(q);
      return;
    }
    if (q.length > 64) {
      box.replaceChildren(el("div.find-msg", "A hash has 64 hex digits; this has more."));
      open();
      done(q);
      return;
    }
    const hits = [];
    let total = 0;
    const seen = new Set();
    for (const item of ctx.state.items) {
      const src = sources[item.kind];
      if (!src) continue;
      src.eachHash(item, (hash, label, route) => {
        if (!hash.startsWith(q)) return;
        if (label == null) label = src.labelOf(item, route);
        const key = item.id + hash + label;
        if (seen.has(key)) return;
        seen.add(key);
        total++;
        if (hits.length < MAX_SHOWN) hits.push({ item, hash, label, route: src.routeOf(route) });
      });
    }
    if (my !== token) return;
    if (hits.length) {
      box.replaceChildren(
        el("div.find-msg", `${num(total)} match${total === 1 ? "" : "es"}${total > hits.length ? `, first ${hits.length} shown` : ""}`),
        ...hits.map((h) => hitButton(h, q, ctx, close)));
      open();
      done(q);
      return;
    }
    if (!ctx.state.items.some((i) => sources[i.kind])) {
      box.replaceChildren(el("div.find-msg", "Nothing open to search."));
      open();
      done(q);
      return;
    }
    box.replaceChildren(el("div.find-msg", "No match. Looking for the nearest hashes…"));
    delete box.dataset.query;
    open();
    const near = await nearest(q, ctx, () => my !== token);
    if (!near || my !== token) return;
    box.replaceChildren(el("div.find-msg", `No hash starts with ${q}. Nearest by edit distance:`),
      ...near.map((h) => hitButton(h, null, ctx, close, h.d)));
    done(q);
  }
}

function hitButton(h, q, ctx, close, distance) {
  const hashText = q
    ? el("span.hash", el("mark", h.hash.slice(0, q.length)), h.hash.slice(q.length))
    : el("span.hash", h.hash);
  return el("button.hit", {
    type: "button",
    role: "option",
    dataset: { hash: h.hash, item: h.item.id },
    onclick: () => { close(); ctx.go({ item: h.item.id, ...h.route }); },
  },
  el("span.hit-where", el("strong", h.item.name), " · ", h.label, distance != null ? el("span.dist", ` distance ${distance}`) : null),
  hashText);
}

/** The NEAREST hashes by prefix edit distance, scanned in slices. */
async function nearest(q, ctx, cancelled) {
  const best = []; // sorted by d, then hash
  let bound = q.length; // worse than this is useless
  const seen = new Set();
  const row0 = new Int32Array(q.length + 1), row1 = new Int32Array(q.length + 1);
  let n = 0;
  for (const item of ctx.state.items) {
    const src = sources[item.kind];
    if (!src) continue;
    const list = [];
    src.eachHash(item, (hash, label, route) => list.push(hash, label, route));
    for (let k = 0; k < list.length; k += 3) {
      const hash = list[k];
      const d = prefixDistance(q, hash, bound, row0, row1);
      if (d <= bound && !seen.has(item.id + hash)) {
        seen.add(item.id + hash);
        const label = list[k + 1] ?? src.labelOf(item, list[k + 2]);
        best.push({ item, hash, label, route: src.routeOf(list[k + 2]), d });
        best.sort((a, b) => a.d - b.d || (a.hash < b.hash ? -1 : 1));
        if (best.length > NEAREST) best.length = NEAREST;
        if (best.length === NEAREST) bound = best[NEAREST - 1].d;
      }
      if (++n % 20000 === 0) {
        await new Promise((r) => setTimeout(r, 0));
        if (cancelled()) return null;
      }
    }
  }
  return best;
}

/**
 * Edit distance between q and the best-matching beginning of h (the rest of
 * h is free). Stops early, returning bound+1, once no cell can be ≤ bound.
 */
export function prefixDistance(q, h, bound, prev = new Int32Array(q.length + 1), cur = new Int32Array(q.length + 1)) {
  // DP over h's characters (columns j), rows = q; answer = min over j of D[m][j].
  const m = q.length;
  for (let i = 0; i <= m; i++) prev[i] = i;
  let best = prev[m];
  const maxJ = Math.min(h.length, m + bound);
  for (let j = 1; j <= maxJ; j++) {
    cur[0] = j;
    let rowMin = cur[0];
    const hc = h.charCodeAt(j - 1);
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1] + (q.charCodeAt(i - 1) === hc ? 0 : 1);
      const del = prev[i] + 1, ins = cur[i - 1] + 1;
      const v = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
      cur[i] = v;
      if (v < rowMin) rowMin = v;
    }
    if (cur[m] < best) best = cur[m];
    if (rowMin > bound || rowMin >= best) break;
    prev.set(cur);
  }
  return best;
}
