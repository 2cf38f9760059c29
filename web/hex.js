// The hex view: the bytes of whatever is selected, with its fields
// outlined, coloured and named. Rows are virtualized, so a 64 MiB input
// scrolls like a small one.

import { el } from "./util.js";
import { VTable } from "./vtable.js";

const PALETTE = 8;

export class HexView {
  constructor(root) {
    this.root = root;
    this.bytes = new Uint8Array(0);
    this.fields = [];
    this.focus = 0;
    this.shown = false;
    this.per = 16;
    this.title = el("div.hex-title", "Select something to see its bytes.");
    this.grid = el("div.hex-grid");
    this.legend = el("div.hex-legend", { role: "list", "aria-label": "fields" });
    root.replaceChildren(this.title, el("div.hex-body", this.grid, this.legend));
    new ResizeObserver(() => {
      const per = this.grid.clientWidth && this.grid.clientWidth < 470 ? 8 : 16;
      if (per !== this.per) { this.per = per; this.redraw(); }
    }).observe(this.grid);
  }

  /**
   * Shows bytes with fields [{name, offset, size, value} (the module's FieldSpan)] outlined, scrolled to
   * focus (default: the first field's start). title says what it is.
   */
  show(bytes, fields, { title = "", focus } = {}) {
    this.bytes = bytes;
    this.fields = fields.filter((f) => f.size > 0).sort((a, b) => a.offset - b.offset);
    this.focus = focus ?? (this.fields.length ? this.fields[0].offset : 0);
    this.titleText = title;
    this.shown = true;
    this.redraw();
  }

  redraw() {
    if (!this.shown) return; // resized before anything was shown
    const b = this.bytes, per = this.per;
    const lo = this.fields.length ? this.fields[0].offset : this.focus;
    const hi = this.fields.length ? Math.max(...this.fields.map((f) => f.offset + f.size)) : this.focus + 1;
    this.title.replaceChildren(
      el("strong", this.titleText || "Bytes"),
      el("span.muted", ` bytes ${lo.toLocaleString("en-US")}–${Math.max(lo, hi - 1).toLocaleString("en-US")} (0x${lo.toString(16)}) of ${b.length.toLocaleString("en-US")}`),
    );
    this.table?.ro.disconnect();
    this.table = new VTable({
      label: "hex bytes",
      columns: [
        { label: "offset", width: "9ch", cell: (i) => (i * per).toString(16).padStart(8, "0") },
        { label: hexHeader(per), width: `${per * 3}ch`, cell: (i) => this.hexCell(i) },
        { label: "ascii", width: `${per + 1}ch`, cell: (i) => this.asciiCell(i) },
      ],
      rowCount: Math.ceil(b.length / per),
      row: (i) => i,
    });
    this.table.root.classList.add("hex-table");
    this.grid.replaceChildren();
    this.table.mount(this.grid);
    const row = Math.floor(this.focus / per);
    this.table.scrollToRow(Math.max(0, row - 1));
    this.table.active = -1;
    this.table.render();
    this.drawLegend();
  }

  fieldAt(o) {
    // few fields: a linear scan is fine; the narrowest field holding o wins,
    // so a marked byte shows inside the structure around it
    let best = -1;
    for (let k = 0; k < this.fields.length; k++) {
      const f = this.fields[k];
      if (o >= f.offset && o < f.offset + f.size && (best < 0 || f.size < this.fields[best].size)) best = k;
    }
    return best;
  }

  hexCell(i) {
    const per = this.per, b = this.bytes;
    const frag = el("span.hexrow");
    const end = Math.min(b.length, (i + 1) * per);
    for (let o = i * per; o < end; o++) {
      const k = this.fieldAt(o);
      const s = document.createElement("span");
      s.textContent = b[o].toString(16).padStart(2, "0");
      let cls = "hb";
      if (k >= 0) {
        const f = this.fields[k];
        cls += ` f f${k % PALETTE}`;
        if (o === f.offset || o % per === 0) cls += " fs";
        if (o === f.offset + f.size - 1 || o % per === per - 1) cls += " fe";
        s.title = `${f.name} @ ${f.offset}+${o - f.offset}`;
      }
      if (o === this.focus && !this.fields.length) cls += " focus";
      s.className = cls;
      frag.append(s);
    }
    return frag;
  }

  asciiCell(i) {
    const b = this.bytes, per = this.per;
    let s = "";
    const end = Math.min(b.length, (i + 1) * per);
    for (let o = i * per; o < end; o++) s += b[o] >= 0x20 && b[o] < 0x7f ? String.fromCharCode(b[o]) : ".";
    return s;
  }

  drawLegend() {
    this.legend.replaceChildren(...this.fields.map((f, k) => el("button.hex-field", {
      type: "button",
      role: "listitem",
      title: `jump to ${f.name}`,
      dataset: { field: f.name },
      onclick: () => this.table.scrollToRow(Math.max(0, Math.floor(f.offset / this.per) - 1)),
    },
    el(`span.swatch.f${k % PALETTE}`),
    el("span.fname", f.name),
    el("span.frange", `@${f.offset} +${f.size}`),
    f.value != null ? el("span.fval", String(f.value)) : null)));
  }
}

function hexHeader(per) {
  let s = "";
  for (let i = 0; i < per; i++) s += i.toString(16).padStart(2, "0") + " ";
  return s.trimEnd();
}
