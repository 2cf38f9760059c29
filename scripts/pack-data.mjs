// Rewrites the data section of a WebAssembly module Go built: segments
// whose gap is at most maxGap zero bytes become one segment, the gap
// written out as zeros. Go's linker starts a new segment at every run of
// more than 8 zero bytes, which saves raw bytes but costs gzip dearly: a
// segment's header (its address and size) hardly compresses, and the
// runtime's findfunctab alone (a 20-byte bucket per 4 KiB of PC space, and
// under GOOS=js each function spans 64 KiB of it) makes tens of thousands
// of them. The memory the module starts with is the same byte for byte; the
// script rebuilds both images and refuses to write otherwise. Run by
// build-wasm.sh on both modules.
//
//   node scripts/pack-data.mjs IN.wasm OUT.wasm
import { readFileSync, renameSync, writeFileSync } from "node:fs";

// maxGap: longer runs of zeros stay between segments. Measured on
// xetkit-core.wasm (gzip -9 of the module, 825,066 bytes as Go wrote it):
// 16 → 816,548; 32 → 742,952; 128 → 742,519; 512 → 742,512; every gap
// filled → 747,460 (a megabyte of zeros more).
const maxGap = 512;

const [input, output] = process.argv.slice(2);
if (!input || !output) throw new Error("usage: node scripts/pack-data.mjs IN.wasm OUT.wasm");
const src = readFileSync(input);
const out = packData(src);
const memory = (b) => image(segments(b).segs);
if (!memory(src).equals(memory(out))) throw new Error(`pack-data: ${input}: the packed module would start with other memory`);
writeFileSync(`${output}.packing`, out);
renameSync(`${output}.packing`, output);

// packData returns the module b with its data segments merged.
function packData(b) {
  const { start, end, segs } = segments(b);
  segs.sort((x, y) => x.addr - y.addr);
  const merged = [];
  for (const s of segs) {
    const last = merged.at(-1);
    const lastEnd = last ? last.addr + last.size : 0;
    if (last && s.addr < lastEnd) throw new Error(`pack-data: segments overlap at ${s.addr}`);
    if (last && s.addr - lastEnd <= maxGap) {
      last.parts.push(s);
      last.size = s.addr + s.bytes.length - last.addr;
    } else {
      merged.push({ addr: s.addr, size: s.bytes.length, parts: [s] });
    }
  }
  const body = [Buffer.from(uleb(merged.length))];
  for (const m of merged) {
    const bytes = Buffer.alloc(m.size);
    for (const s of m.parts) s.bytes.copy(bytes, s.addr - m.addr);
    body.push(Buffer.from([0, 0x41, ...sleb(m.addr), 0x0b, ...uleb(m.size)]), bytes);
  }
  const section = Buffer.concat(body);
  return Buffer.concat([b.subarray(0, start), Buffer.from([11, ...uleb(section.length)]), section, b.subarray(end)]);
}

// segments finds the data section of b (start and end of the whole
// section, id and size included) and its segments {addr, bytes}. Only what
// Go writes is taken: active segments of memory 0 at an i32.const address,
// and no data count section.
function segments(b) {
  let p = 8;
  const u = () => {
    let r = 0, shift = 0, c;
    do { c = b[p++]; r += (c & 0x7f) * 2 ** shift; shift += 7; } while (c & 0x80);
    return r;
  };
  const s32 = () => {
    let r = 0, shift = 0, c;
    do { c = b[p++]; r |= (c & 0x7f) << shift; shift += 7; } while (c & 0x80);
    return shift < 32 && c & 0x40 ? r | (-1 << shift) : r;
  };
  while (p < b.length) {
    const start = p, id = b[p++], size = u(), end = p + size;
    if (id === 12) throw new Error("pack-data: a data count section (not Go's output)");
    if (id === 11) {
      const segs = [];
      for (let n = u(); n > 0; n--) {
        if (u() !== 0 || b[p++] !== 0x41) throw new Error("pack-data: a data segment that is not active at an i32.const");
        const addr = s32();
        if (b[p++] !== 0x0b) throw new Error("pack-data: a data segment's offset is not a constant");
        const len = u();
        segs.push({ addr, bytes: b.subarray(p, p + len) });
        p += len;
      }
      if (p !== end) throw new Error("pack-data: the data section's size disagrees with its segments");
      return { start, end, segs };
    }
    p = end;
  }
  throw new Error("pack-data: no data section");
}

// image is the memory the segments write, from address 0 to the last byte
// written.
function image(segs) {
  const top = segs.reduce((t, s) => Math.max(t, s.addr + s.bytes.length), 0);
  const mem = Buffer.alloc(top);
  for (const s of segs) s.bytes.copy(mem, s.addr);
  return mem;
}

function uleb(n) {
  const o = [];
  do {
    let c = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) c |= 0x80;
    o.push(c);
  } while (n);
  return o;
}

function sleb(n) {
  const o = [];
  for (;;) {
    const c = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(c & 0x40)) || (n === -1 && c & 0x40)) return [...o, c];
    o.push(c | 0x80);
  }
}
