// Readable at 1280×800 and 390×844: in every view, nothing overflows the
// window sideways, the page's regions and the blocks of each view do not
// overlap, cards stay inside the window, and text is not tiny.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setup, pageTest, plainFiles, tourViewer } from "./helpers.mjs";

const env = {};
before(async () => { Object.assign(env, await setup()); });
after(async () => { await env.stop?.(); });

/** Problems with the layout of what is on screen now; [] when clean. */
function problems(page, where) {
  return page.evaluate((where) => {
    const out = [];
    const W = innerWidth, H = innerHeight;
    const doc = document.documentElement;
    if (doc.scrollWidth > W + 1) out.push(`${where}: page is ${doc.scrollWidth}px wide in a ${W}px window`);
    const box = (e) => e.getBoundingClientRect();
    const visible = (e) => { const r = box(e); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden"; };
    const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
    const regions = [".top", ".items", "main", ".hexpane"].map((s) => document.querySelector(s)).filter((e) => e && visible(e));
    for (let i = 0; i < regions.length; i++) {
      const r = box(regions[i]);
      if (r.bottom > H + 1 || r.right > W + 1) out.push(`${where}: ${regions[i].className || regions[i].tagName} ends outside the window`);
      for (let j = i + 1; j < regions.length; j++) if (overlap(r, box(regions[j]))) out.push(`${where}: ${regions[i].tagName}.${regions[i].className} overlaps ${regions[j].tagName}.${regions[j].className}`);
    }
    // siblings in the view and in the top bar must not overlap
    for (const parent of [document.querySelector(".top"), document.querySelector("main"), document.getElementById("content"), document.querySelector(".cards"), document.querySelector(".item-head")]) {
      if (!parent) continue;
      const kids = [...parent.children].filter((e) => visible(e) && getComputedStyle(e).position !== "absolute");
      for (let i = 0; i < kids.length; i++) for (let j = i + 1; j < kids.length; j++) {
        if (overlap(box(kids[i]), box(kids[j]))) out.push(`${where}: ${kids[i].className || kids[i].tagName} overlaps ${kids[j].className || kids[j].tagName}`);
      }
    }
    for (const c of document.querySelectorAll(".card, .btn, .sec, .itab")) {
      if (!visible(c)) continue;
      const r = box(c);
      if (c.matches(".card, .btn") && (r.left < -1 || r.right > W + 1)) out.push(`${where}: ${c.className} "${c.textContent.slice(0, 30)}" sticks out of the window`);
      if (c.matches(".card") && c.scrollWidth > c.clientWidth + 1) out.push(`${where}: card "${c.textContent.slice(0, 30)}" overflows its box`);
    }
    for (const e of document.querySelectorAll("main *, .top *, .hexpane *")) {
      if (!e.childNodes.length || ![...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
      if (!visible(e)) continue;
      const fs = parseFloat(getComputedStyle(e).fontSize);
      if (fs < 10.5) out.push(`${where}: text "${e.textContent.slice(0, 20)}" is ${fs}px`);
    }
    return out;
  }, where);
}

for (const [label, width, height] of [["desktop", 1280, 800], ["phone", 390, 844]]) {
  test(`readable at ${width}×${height}`, pageTest(env, async (page) => {
    const found = [];
    await tourViewer(page, plainFiles(), async (where) => found.push(...await problems(page, `${label} ${where}`)));
    assert.deepEqual(found, []);
  }, { width, height }));
}
