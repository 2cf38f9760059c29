// Shared by bench/wasm-node.mjs and bench/wasm-chromium.mjs (and injected
// into the Chromium page as source text, so it must stay self-contained:
// no imports).

// fillRandom fills out with xorshift32 bytes from seed: fast, deterministic,
// the same in Node and in the page.
export function fillRandom(out, seed) {
  const words = new Uint32Array(out.buffer, out.byteOffset, out.byteLength >>> 2);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  for (let i = words.length * 4; i < out.length; i++) out[i] = i & 0xff;
  return out;
}

// poolOption reads the pool size a bench is asked for (a string of
// digits, or nothing: load()'s default) as load()'s option and a word on
// where it comes from.
export function poolOption(workers) {
  if (workers === undefined || workers === "") return { option: {}, why: "the default: a worker for each core but two" };
  return { option: { workers: Number(workers) }, why: "XETKIT_BENCH_WORKERS" };
}

// wasmMemory names an instance's WebAssembly memory and its workers'.
export function wasmMemory(main, workers) {
  const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  return workers.length === 0 ? `${mib(main)}, no workers` : `${mib(main)} main + ${workers.map(mib).join(" + ")} in ${workers.length} workers`;
}

// memoryPeak follows the largest JS heap + WebAssembly memory (this
// instance's and its workers') of a page: sample() takes a reading unless
// one is under way, peak() waits for it, takes a last one and returns the
// largest seen with its parts.
export function memoryPeak(xk) {
  let peak = { total: 0 };
  let pending = null;
  const sample = () => {
    if (pending) return;
    pending = xk.memory().then((m) => {
      const js = performance.memory.usedJSHeapSize;
      const wasm = m.wasm + m.workers.reduce((a, b) => a + b, 0);
      if (js + wasm > peak.total) peak = { total: js + wasm, js, wasm, main: m.wasm, workers: m.workers };
      pending = null;
    });
  };
  const last = async () => {
    await pending;
    sample();
    await pending;
    return peak;
  };
  return { sample, peak: last };
}

// runChunkBench times the peer's getChunks, xetkit's chunk (one instance)
// and chunkAsync (the pool) on the same buffer and returns the best MB/s
// of each (best of rounds: the machine is shared) and, for each round, the
// pool's speed over one instance's. Each ratio comes from rounds of its
// own two, which take turns to go first: first the peer against one
// instance, then the pool against one instance. (Had the peer run in the
// pool's rounds, whichever of the two went right after it would pay for
// its garbage, the pool more than one instance: 5 to 15% under load.)
//
// With portable (an instance loaded with kernels: false), its chunk runs
// in the peer's rounds too, after the pair: the same job without the SIMD
// kernels.
export async function runChunkBench({ xk, portable, getChunks, buf, rounds, log }) {
  const mb = buf.length / 1e6;
  const best = { peer: 0, single: 0, pool: 0, portable: 0 };
  const ratios = [];
  const counts = {};
  const time = async (name, fn) => {
    const t0 = performance.now();
    const out = await fn();
    const s = (performance.now() - t0) / 1000;
    best[name] = Math.max(best[name], mb / s);
    counts[name] = out.length;
    return mb / s;
  };
  const peer = () => time("peer", () => getChunks(buf));
  const single = () => time("single", () => xk.chunk(buf));
  const pool = () => time("pool", () => xk.chunkAsync(buf));
  // Warm up every path (JIT tiers, the pool's workers).
  getChunks(buf);
  xk.chunk(buf);
  await xk.chunkAsync(buf);
  for (let r = 0; r < rounds; r++) {
    const [p, s] = await inTurn(r, peer, single);
    const k = portable ? await time("portable", () => portable.chunk(buf)) : 0;
    log(`  round ${r + 1}: peer ${p.toFixed(0)} MB/s, xetkit ${s.toFixed(0)} MB/s (${(s / p).toFixed(2)}x the peer)${portable ? `, xetkit without kernels ${k.toFixed(0)} MB/s` : ""}`);
  }
  xk.chunk(buf); // so that the first round's first does not follow the peer
  for (let r = 0; r < rounds; r++) {
    const [s, q] = await inTurn(r, single, pool);
    ratios.push(q / s);
    log(`  round ${r + 1}: xetkit ${s.toFixed(0)} MB/s, xetkit pool ${q.toFixed(0)} MB/s (${(q / s).toFixed(2)}x one instance)`);
  }
  return { best, counts, ratios };
}

// runProcessFileBench times processFile on input (bytes or a Blob) with
// one instance (workers: false) and with the pool, interleaved: the best
// MB/s of each and, for each round, the pool's speed over one instance's.
// The two must give the same file hash.
export async function runProcessFileBench({ xk, input, rounds, log }) {
  const what = input instanceof Uint8Array ? "bytes" : "a Blob";
  const mb = (input.length ?? input.size) / 1e6;
  const best = { single: 0, pool: 0 };
  const ratios = [];
  const time = async (name, workers) => {
    const t0 = performance.now();
    const r = await xk.processFile(input, { workers });
    const speed = mb / ((performance.now() - t0) / 1000);
    best[name] = Math.max(best[name], speed);
    return { speed, hash: r.hash };
  };
  await time("single", false);
  await time("pool", true);
  for (let r = 0; r < rounds; r++) {
    const [s, q] = await inTurn(r, () => time("single", false), () => time("pool", true));
    if (s.hash !== q.hash) throw new Error(`processFile: the pool gave file hash ${q.hash}, one instance ${s.hash}`);
    ratios.push(q.speed / s.speed);
    log(`  processFile of ${what}, round ${r + 1}: one instance ${s.speed.toFixed(0)} MB/s, pool ${q.speed.toFixed(0)} MB/s (${(q.speed / s.speed).toFixed(2)}x)`);
  }
  log(`  processFile of ${what}: one instance ${best.single.toFixed(0)} MB/s, pool ${best.pool.toFixed(0)} MB/s; the pool against one instance ${(best.pool / best.single).toFixed(2)}x best to best, ${ratioSummary(ratios)} (target >= 1.00x)${xk.workers === 0 ? noPool : ""}`);
  return { best, ratios };
}

// noPool follows a ratio when the pool has no workers: both sides then do
// the work on the calling thread.
const noPool = "; the pool is empty, so both run on this thread and the ratio shows the noise";

// inTurn runs a then b in even rounds, b then a in odd ones; it returns
// their results as [a's, b's].
async function inTurn(round, a, b) {
  if (round % 2 === 0) return [await a(), await b()];
  const second = await b();
  return [await a(), second];
}

function median(xs) {
  return quantile(xs, 0.5);
}

// quantile is the q-quantile of xs, interpolated between ranks.
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const at = q * (s.length - 1);
  const lo = Math.floor(at);
  return lo + 1 < s.length ? s[lo] + (at - lo) * (s[lo + 1] - s[lo]) : s[lo];
}

// ratioSummary says the median round's ratio and the middle half of the
// rounds': two runs of the same work differ by as much round to round
// (the machine is shared), so a median within that spread of 1.00x is a
// tie.
export function ratioSummary(ratios) {
  return `${median(ratios).toFixed(2)}x the median round (the middle half of the rounds ${quantile(ratios, 0.25).toFixed(2)}x to ${quantile(ratios, 0.75).toFixed(2)}x)`;
}

export function report({ where, best, counts, ratios, workers, log }) {
  const f = (x) => x.toFixed(0).padStart(5);
  log(`${where}: chunk + hash of the same buffer, best of the rounds`);
  log(`  @huggingface/xetchunk-wasm getChunks ${f(best.peer)} MB/s   (${counts.peer} chunks)`);
  log(`  xetkit chunk (one instance)          ${f(best.single)} MB/s   ${(best.single / best.peer).toFixed(2)}x the peer (target >= 1.50x)`);
  if (best.portable) log(`  xetkit chunk, kernels: false         ${f(best.portable)} MB/s   ${(best.portable / best.peer).toFixed(2)}x the peer (the portable Go code)`);
  log(`  xetkit chunkAsync (${workers} workers)        ${f(best.pool)} MB/s   ${(best.pool / best.peer).toFixed(2)}x the peer (target >= 1.50x)`);
  log(`  the pool against one instance: ${(best.pool / best.single).toFixed(2)}x best to best, ${ratioSummary(ratios)} (target >= 1.00x)${workers === 0 ? noPool : ""}`);
  if (counts.peer !== counts.single) {
    log(`  (chunk counts differ, ${counts.single} vs ${counts.peer}: the peer's getChunks cuts chunks below the 8 KiB minimum; see wasm/test/helpers.mjs)`);
  }
}
