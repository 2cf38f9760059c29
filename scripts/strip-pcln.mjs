// Takes out of a Go WebAssembly module the parts of its function table
// (the runtime's pclntab, in the data section) that only print: the
// file/line tables, the inlining index, the files, each function's start
// line, and the name of every function outside package runtime. Zeroed in
// place (the next step, pack-data.mjs, merges the segments; zeros cost
// gzip almost nothing): xetkit-core.wasm 735.7 -> 680 KB of gzip.
//
// What stays is all the runtime reads to run: the function table and its
// lookup buckets, each function's entry, frame size (pcsp), stack maps and
// the other pcdata and funcdata, its funcID and flags, and the names of
// package runtime's functions (the runtime tells its own goroutines and
// frames by the "runtime." prefix). The runtime reads a zero table offset
// as "no table" (pcvalue returns -1, funcline1 then gives "?", 0) and a zero
// name offset as "" (moduledata.funcName), so a traceback or an internal
// error's stack of a stripped module names runtime's functions and no
// file or line: reproduce it with the full module (xetkit.wasm, not
// stripped), which gives the same results (wasm/test/core.test.mjs).
//
// With --start-lines (the full module) it zeroes the start lines alone,
// which only runtime/pprof reads (runtime.Frame's startLine): 10 KB of
// gzip, tracebacks as they were.
//
// The script checks the layout it expects (Go 1.20+'s pcHeader, the
// _func record of Go 1.26) and that no byte a kept table or name uses is
// touched, and fails the build otherwise.
//
//   node scripts/strip-pcln.mjs [--start-lines] IN.wasm OUT.wasm
import { readFileSync, renameSync, writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const startLinesOnly = args[0] === "--start-lines";
if (startLinesOnly) args.shift();
const [input, output] = args;
if (!input || !output) throw new Error("usage: node scripts/strip-pcln.mjs [--start-lines] IN.wasm OUT.wasm");
const fail = (msg) => { throw new Error(`strip-pcln: ${input}: ${msg}`); };

const b = Buffer.from(readFileSync(input));
const segs = dataSegments(b);
const top = segs.reduce((t, s) => Math.max(t, s.addr + s.len), 0);
const mem = Buffer.alloc(top);
for (const s of segs) b.copy(mem, s.addr, s.at, s.at + s.len);

// The pcHeader: magic 0xfffffff1, two zero pads, minLC 1 (wasm's PC
// quantum), ptrSize 8; then nfunc, nfiles, textStart and the offsets of
// funcnametab, cutab, filetab, pctab and the function table, each 8 bytes.
const headers = [];
for (let i = 0; i + 72 <= top; i += 8) {
  if (mem.readUInt32LE(i) === 0xfffffff1 && mem[i + 4] === 0 && mem[i + 5] === 0 && mem[i + 6] === 1 && mem[i + 7] === 8) headers.push(i);
}
if (headers.length !== 1) fail(`${headers.length} pclntab headers found, want 1`);
const hdr = headers[0];
const word = (k) => Number(mem.readBigUInt64LE(hdr + 8 + 8 * k));
const nfunc = word(0);
const [names, cutab, filetab, pctab, ftab] = [3, 4, 5, 6, 7].map((k) => hdr + word(k));
if (!(nfunc > 0 && names < cutab && cutab <= filetab && filetab <= pctab && pctab < ftab && ftab + 8 * (nfunc + 1) <= top)) fail("the pclntab header's offsets are not in order");

// _func (runtime/runtime2.go): entryOff, nameOff, args, deferreturn, pcsp,
// pcfile, pcln, npcdata, cuOffset, startLine (4 bytes each), funcID, flag,
// a pad, nfuncdata (1 byte each), then npcdata u32 pcdata offsets and
// nfuncdata u32 funcdata offsets.
const F = { nameOff: 4, pcsp: 16, pcfile: 20, pcln: 24, npcdata: 28, cuOffset: 32, startLine: 36, nfuncdata: 43, pcdata: 44 };
const inlTreeIndex = 2; // abi.PCDATA_InlTreeIndex
const kept = new Uint8Array(top); // bytes a kept table or name uses
const drop = new Set(); // pctab offsets of dropped tables
const keepTable = new Set();
const funcs = [];
let lastEntry = -1;
for (let k = 0; k < nfunc; k++) {
  const entry = mem.readUInt32LE(ftab + 8 * k);
  if (entry < lastEntry) fail(`function ${k}'s entry is before the previous one's`);
  lastEntry = entry;
  const fo = ftab + mem.readUInt32LE(ftab + 8 * k + 4);
  if (fo + F.pcdata > top || mem.readUInt32LE(fo) !== entry) fail(`function ${k}'s record does not start with its entry`);
  const npcdata = mem.readUInt32LE(fo + F.npcdata), nfuncdata = mem[fo + F.nfuncdata];
  if (npcdata > 16 || nfuncdata > 16) fail(`function ${k} has ${npcdata} pcdata and ${nfuncdata} funcdata: not the _func layout this script knows`);
  const nameOff = mem.readInt32LE(fo + F.nameOff);
  if (nameOff < 0 || names + nameOff >= cutab || (nameOff > 0 && mem[names + nameOff - 1] !== 0)) fail(`function ${k}'s name offset ${nameOff} is not the start of a name`);
  let end = names + nameOff;
  while (mem[end] !== 0) end++;
  const name = mem.toString("latin1", names + nameOff, end);
  funcs.push({ fo, npcdata, name, nameOff, nameEnd: end });
  keepTable.add(mem.readUInt32LE(fo + F.pcsp));
  for (let j = 0; j < npcdata; j++) {
    const off = mem.readUInt32LE(fo + F.pcdata + 4 * j);
    (j === inlTreeIndex ? drop : keepTable).add(off);
  }
  drop.add(mem.readUInt32LE(fo + F.pcfile));
  drop.add(mem.readUInt32LE(fo + F.pcln));
}
keepTable.delete(0);
drop.delete(0);
if (startLinesOnly) {
  for (const f of funcs) mem.writeInt32LE(0, f.fo + F.startLine);
  drop.clear();
}
for (const off of keepTable) kept.fill(1, pctab + off, pctab + off + tableLength(off));
for (const f of funcs) if (f.name.startsWith("runtime.")) kept.fill(1, names + f.nameOff, f.nameEnd + 1);

const zero = (from, to) => {
  for (let i = from; i < to; i++) if (kept[i]) fail(`byte ${i} is in a kept table or name`);
  mem.fill(0, from, to);
};
for (const off of drop) if (!keepTable.has(off)) zero(pctab + off, pctab + off + tableLength(off));
if (!startLinesOnly) {
  zero(cutab, pctab); // cutab and filetab: read only through pcfile
  for (let i = names; i < cutab; i++) if (!kept[i]) mem[i] = 0;
}
for (const f of startLinesOnly ? [] : funcs) {
  mem.writeUInt32LE(0, f.fo + F.pcfile);
  mem.writeUInt32LE(0, f.fo + F.pcln);
  mem.writeUInt32LE(0, f.fo + F.cuOffset);
  mem.writeInt32LE(0, f.fo + F.startLine);
  if (f.npcdata > inlTreeIndex) mem.writeUInt32LE(0, f.fo + F.pcdata + 4 * inlTreeIndex);
  if (!f.name.startsWith("runtime.")) mem.writeInt32LE(0, f.fo + F.nameOff);
}

for (const s of segs) mem.copy(b, s.at, s.addr, s.addr + s.len);
writeFileSync(`${output}.stripping`, b);
renameSync(`${output}.stripping`, output);

// tableLength is the length in bytes of the pc-value table at pctab+off:
// pairs of varints (value delta, pc delta) up to a zero value delta after
// the first pair.
function tableLength(off) {
  let p = pctab + off;
  const start = p;
  for (let first = true; ; first = false) {
    let v = 0, shift = 0, c;
    do {
      if (p >= ftab) fail(`the pc-value table at ${off} runs past pctab`);
      c = mem[p++];
      v += (c & 0x7f) * 2 ** shift;
      shift += 7;
    } while (c & 0x80);
    if (v === 0 && !first) return p - start;
    do c = mem[p++]; while (c & 0x80);
  }
}

// dataSegments lists the module's data segments {addr, at, len}: at is
// where the segment's bytes are in the module. Only what Go writes is
// taken: active segments of memory 0 at an i32.const address.
function dataSegments(m) {
  let p = 8;
  const u = () => {
    let r = 0, shift = 0, c;
    do { c = m[p++]; r += (c & 0x7f) * 2 ** shift; shift += 7; } while (c & 0x80);
    return r;
  };
  const s32 = () => {
    let r = 0, shift = 0, c;
    do { c = m[p++]; r |= (c & 0x7f) << shift; shift += 7; } while (c & 0x80);
    return shift < 32 && c & 0x40 ? r | (-1 << shift) : r;
  };
  while (p < m.length) {
    const id = m[p++], size = u(), end = p + size;
    if (id === 11) {
      const out = [];
      for (let n = u(); n > 0; n--) {
        if (u() !== 0 || m[p++] !== 0x41) fail("a data segment that is not active at an i32.const");
        const addr = s32();
        if (m[p++] !== 0x0b) fail("a data segment's offset is not a constant");
        const len = u();
        out.push({ addr, at: p, len });
        p += len;
      }
      return out;
    }
    p = end;
  }
  fail("no data section");
}
