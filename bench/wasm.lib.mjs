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

// runChunkBench times the peer's getChunks, xetkit's chunk (one instance)
// and chunkAsync (the pool) on the same buffer, interleaved, and returns
// the best MB/s of each (best of rounds: the machine is shared) and, for
// each round, the pool's speed over one instance's.
export async function runChunkBench({ xk, getChunks, buf, rounds, log }) {
  const mb = buf.length / 1e6;
  const best = { peer: 0, single: 0, pool: 0 };
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
  // Warm up every path (JIT tiers, the pool's workers).
  getChunks(buf);
  xk.chunk(buf);
  await xk.chunkAsync(buf);
  for (let r = 0; r < rounds; r++) {
    const p = await time("peer", () => getChunks(buf));
    // Which of the two goes first alternates, so that neither always
    // pays for the other's garbage.
    const [s, q] = await inTurn(r, () => time("single", () => xk.chunk(buf)), () => time("pool", () => xk.chunkAsync(buf)));
    ratios.push(q / s);
    log(`  round ${r + 1}: peer ${p.toFixed(0)} MB/s, xetkit ${s.toFixed(0)} MB/s, xetkit pool ${q.toFixed(0)} MB/s (${(q / s).toFixed(2)}x one instance)`);
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
  log(`  processFile of ${what}: one instance ${best.single.toFixed(0)} MB/s, pool ${best.pool.toFixed(0)} MB/s; the pool against one instance ${(best.pool / best.single).toFixed(2)}x best to best, ${median(ratios).toFixed(2)}x the median round (target >= 1.00x)`);
  return { best, ratios };
}

// inTurn runs a then b in even rounds, b then a in odd ones; it returns
// their results as [a's, b's].
async function inTurn(round, a, b) {
  if (round % 2 === 0) return [await a(), await b()];
  const second = await b();
  return [await a(), second];
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function report({ where, best, counts, ratios, workers, log }) {
  const f = (x) => x.toFixed(0).padStart(5);
  log(`${where}: chunk + hash of the same buffer, best of the rounds`);
  log(`  @huggingface/xetchunk-wasm getChunks ${f(best.peer)} MB/s   (${counts.peer} chunks)`);
  log(`  xetkit chunk (one instance)          ${f(best.single)} MB/s   ${(best.single / best.peer).toFixed(2)}x the peer (target >= 0.80x)`);
  log(`  xetkit chunkAsync (${workers} workers)        ${f(best.pool)} MB/s   ${(best.pool / best.peer).toFixed(2)}x the peer (target >= 1.50x)`);
  log(`  the pool against one instance: ${(best.pool / best.single).toFixed(2)}x best to best, ${median(ratios).toFixed(2)}x the median round (target >= 1.00x)`);
  if (counts.peer !== counts.single) {
    log(`  (chunk counts differ, ${counts.single} vs ${counts.peer}: the peer's getChunks cuts chunks below the 8 KiB minimum; see wasm/test/helpers.mjs)`);
  }
}
