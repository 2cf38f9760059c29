// A virtualized table: fixed row height, only the visible rows exist in the
// DOM. Past a few million pixels the scrollbar is scaled (browsers cap an
// element's height near 33.5 million px), so a 1.4-million-row table still
// scrolls to its last row.

import { el, copy } from "./util.js";

export const ROW_H = 26;
const MAX_PX = 4_000_000;
let nextId = 0;

/**
 * new VTable({columns, rowCount, row(i) → any, onActivate(i, row), label})
 * columns: [{label, width: "120px" | "var(--hashw)", align: "right", cell(row, i) → string|Node, hash(row) → string}]
 */
export class VTable {
  constructor(opts) {
    this.columns = opts.columns;
    this.count = opts.rowCount;
    this.rowFn = opts.row;
    this.onActivate = opts.onActivate || null;
    this.onSelect = opts.onSelect || null;
    this.clickActivates = opts.clickActivates !== false;
    this.active = -1;
    this.id = `vt${++nextId}`;
    this.template = this.columns.map((c) => c.width || "1fr").join(" ");

    this.head = el("div.vt-head", { role: "row" },
      this.columns.map((c) => el("div.vt-cell" + (c.align === "right" ? ".r" : ""), { role: "columnheader" }, c.label)));
    this.spacer = el("div.vt-spacer");
    this.layer = el("div.vt-layer", { role: "rowgroup" });
    // The grid scrolls itself: the element that takes the keys is the one
    // that scrolls (a scrolling region must be reachable by keyboard).
    this.root = el("div.vt", {
      role: "grid",
      tabindex: "0",
      "aria-label": opts.label || "table",
      "aria-rowcount": String(this.count + 1),
      dataset: { rows: String(this.count) },
      onkeydown: (e) => this.key(e),
    }, this.head, this.spacer, this.layer,
    this.count === 0 ? el("div.vt-empty", opts.empty || "No rows.") : null);
    this.scroller = this.root;

    this.root.style.setProperty("--cols", this.template);
    this.pos = 0; // first visible row (fractional), kept exactly in scaled mode
    this.expectTop = null; // the scrollTop we set ourselves, until its scroll event
    // The scroller's geometry as last laid out. Reading clientHeight or
    // scrollTop, or writing scrollTop, makes the browser lay the page out
    // there and then; these are kept from scroll events and the resize
    // observer instead, so drawing a table costs no layout of its own.
    this.top = 0;
    this.viewH = 0; // 0: not laid out yet, so no rows are drawn
    this.maxTop = 0;
    this.reveal = null; // {i, top}: ensureVisible's, until the table has a size
    this.scroller.addEventListener("scroll", () => this.onScroll(), { passive: true });
    this.scroller.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.scroller.addEventListener("touchstart", (e) => this.onTouch(e), { passive: true });
    this.scroller.addEventListener("touchmove", (e) => this.onTouch(e), { passive: false });
    this.layer.addEventListener("click", (e) => {
      if (e.target.closest("button, a")) return;
      const r = e.target.closest(".vt-row");
      if (!r) return;
      this.select(Number(r.dataset.i), this.clickActivates);
      this.root.focus({ preventScroll: true });
    });
    this.ro = new ResizeObserver(() => this.measure());
    this.ro.observe(this.scroller);
    this.setHeight();
  }

  setHeight() {
    const total = this.count * ROW_H;
    this.scaled = total > MAX_PX;
    this.spacer.style.height = `${this.scaled ? MAX_PX : total}px`;
  }

  // Called by the resize observer, after layout and before paint: the
  // sizes are current, and rows drawn now are in the same frame.
  measure() {
    this.viewH = this.scroller.clientHeight;
    this.maxTop = this.scroller.scrollHeight - this.viewH;
    this.top = this.scroller.scrollTop;
    const r = this.reveal; // asked for before the table had a size
    if (r && this.viewH) {
      this.reveal = null;
      this.ensureVisible(r.i, r.top);
    }
    this.render();
  }

  /** Number of rows that fit in the viewport (fractional); 1 before the first layout. */
  visibleRows() {
    return Math.max(1, (this.viewH - ROW_H) / ROW_H);
  }

  maxScroll() {
    return Math.max(1, this.maxTop);
  }

  /** Scrolls the scroller to top pixels (a write, so only when it moves). */
  setTop(top) {
    if (top === this.top) return;
    this.top = top;
    this.scroller.scrollTop = top;
  }

  /** Rows the first visible row can range over. */
  span() {
    return Math.max(0, this.count - this.visibleRows());
  }

  /** Fractional index of the first visible row. */
  firstRow() {
    if (!this.scaled) return this.top / ROW_H;
    return Math.min(this.pos, this.span());
  }

  // In scaled mode one pixel of scrollbar is many rows, so the table keeps
  // its own position: the scrollbar follows it, and only a scroll we did
  // not cause (dragging the scrollbar) moves it.
  onScroll() {
    this.top = this.scroller.scrollTop;
    if (this.scaled) {
      const st = this.top;
      if (this.expectTop !== null && Math.abs(st - this.expectTop) <= 1) this.expectTop = null;
      else this.pos = (st / this.maxScroll()) * this.span();
    }
    this.schedule();
  }

  /** Sets the first visible row (scaled mode). */
  setPos(p) {
    this.pos = Math.max(0, Math.min(this.span(), p));
    const top = Math.round((this.pos / Math.max(1e-9, this.span())) * this.maxScroll());
    if (top !== this.top) this.expectTop = top;
    this.setTop(top);
    this.schedule();
  }

  // The wheel and touch move scaled tables row by row, as if unscaled.
  onWheel(e) {
    if (!this.scaled || e.ctrlKey || Math.abs(e.deltaY) < Math.abs(e.deltaX)) return;
    e.preventDefault();
    const px = e.deltaMode === 1 ? e.deltaY * ROW_H : e.deltaMode === 2 ? e.deltaY * this.viewH : e.deltaY;
    this.setPos(this.firstRow() + px / ROW_H);
  }

  onTouch(e) {
    if (!this.scaled || e.touches.length !== 1) return;
    const t = e.touches[0];
    if (e.type === "touchstart") { this.touch = { x: t.clientX, y: t.clientY, pos: this.firstRow() }; return; }
    if (!this.touch) return;
    const dy = t.clientY - this.touch.y, dx = t.clientX - this.touch.x;
    if (Math.abs(dy) < Math.abs(dx)) return;
    e.preventDefault();
    this.setPos(this.touch.pos - dy / ROW_H);
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.render(); });
  }

  /** Draws the rows now (also called by the scroll handler). */
  render() {
    if (!this.root.isConnected) {
      // replaced by another view: stop watching its size so it can go
      if (this.mounted) this.ro.disconnect();
      return;
    }
    if (!this.viewH) return; // the resize observer draws the first rows
    const firstF = this.firstRow();
    const first = Math.max(0, Math.floor(firstF));
    const n = Math.ceil(this.visibleRows()) + 2;
    const last = Math.min(this.count, first + n);
    const offset = this.scaled
      ? this.top - (firstF - first) * ROW_H
      : first * ROW_H;
    this.layer.style.transform = `translateY(${offset}px)`;
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) frag.append(this.rowEl(i));
    this.layer.replaceChildren(frag);
    this.drawn = [first, last];
    // Point at the active row only while it is drawn: an id that is not in
    // the document is an error to a screen reader.
    if (this.active >= first && this.active < last) this.root.setAttribute("aria-activedescendant", `${this.id}-active`);
    else this.root.removeAttribute("aria-activedescendant");
  }

  rowEl(i) {
    const row = this.rowFn(i);
    const r = document.createElement("div");
    r.className = i === this.active ? "vt-row active" : "vt-row";
    r.setAttribute("role", "row");
    r.setAttribute("aria-rowindex", String(i + 2));
    r.dataset.i = String(i);
    if (i === this.active) {
      r.id = `${this.id}-active`;
      r.setAttribute("aria-selected", "true");
    }
    for (const c of this.columns) {
      const cell = document.createElement("div");
      cell.className = c.align === "right" ? "vt-cell r" : "vt-cell";
      cell.setAttribute("role", "gridcell");
      const v = c.cell(row, i);
      if (v instanceof Node) cell.append(v);
      else cell.textContent = v == null ? "" : String(v);
      r.append(cell);
    }
    return r;
  }

  /** Makes row i active; activate also calls onActivate. */
  select(i, activate = false) {
    if (this.count === 0) return;
    i = Math.max(0, Math.min(this.count - 1, i));
    this.active = i;
    this.ensureVisible(i);
    this.render();
    if (this.onSelect) this.onSelect(i, this.rowFn(i));
    if (activate && this.onActivate) this.onActivate(i, this.rowFn(i));
  }

  /** Scrolls so that row i is in view; top puts it first. */
  ensureVisible(i, top = false) {
    if (!this.viewH) {
      this.reveal = { i, top }; // done once laid out
      return;
    }
    const vis = this.visibleRows();
    const firstF = this.firstRow();
    let target = null;
    if (top || i < firstF) target = i;
    else if (i + 1 > firstF + vis) target = i + 1 - vis;
    if (target == null) return;
    target = Math.max(0, target);
    if (!this.scaled) this.setTop(Math.min(Math.ceil(target * ROW_H), this.maxScroll()));
    else this.setPos(target);
  }

  /** Scrolls to row i, puts it at the top and selects it. */
  scrollToRow(i) {
    if (this.count === 0) return;
    i = Math.max(0, Math.min(this.count - 1, i));
    this.active = i;
    this.ensureVisible(i, true);
    this.render();
  }

  key(e) {
    if (e.target !== this.root) return;
    const page = Math.max(1, Math.floor(this.visibleRows()) - 1);
    const cur = this.active < 0 ? Math.floor(this.firstRow()) - 1 : this.active;
    const moves = {
      ArrowDown: cur + 1, ArrowUp: cur - 1, PageDown: cur + page, PageUp: cur - page,
      Home: 0, End: this.count - 1,
    };
    if (e.key in moves) {
      e.preventDefault();
      this.select(moves[e.key]);
    } else if ((e.key === "Enter" || e.key === " ") && this.active >= 0) {
      e.preventDefault();
      if (this.onActivate) this.onActivate(this.active, this.rowFn(this.active));
    } else if (e.key === "c" && !e.ctrlKey && !e.metaKey && this.active >= 0) {
      const c = this.columns.find((col) => col.hash);
      if (c) { e.preventDefault(); copy(c.hash(this.rowFn(this.active))); }
    }
  }

  /** Puts the table in parent; rows are drawn once it has a size. */
  mount(parent) {
    parent.append(this.root);
    this.mounted = true;
    return this;
  }
}
