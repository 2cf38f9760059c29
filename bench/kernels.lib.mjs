// Shared by bench/kernels.mjs in Node and in its Chromium page: imports
// nothing, gets everything as arguments.

// runKernelBench times, on the same 64 MiB buffer, xetkit's BLAKE3 chunk
// hashes of 64 KiB chunks (hash.chunks: one call for all of them) and
// SHA-256 of the whole buffer (hash.sha256), each with the SIMD kernels
// (on) and without (off), beside hash-wasm's keyed BLAKE3 (one
// init/update/digest per chunk, keyed with Xet's data key) and SHA-256.
// Rounds take turns to go first; returns the best MB/s of each.
export async function runKernelBench({ on, off, createBLAKE3, createSHA256, buf, dataKey, rounds, log }) {
  const chunk = 64 << 10;
  const lens = new Array(buf.length / chunk).fill(chunk);
  const blake = await createBLAKE3(256, dataKey);
  const sha = await createSHA256();
  const peerChunks = () => {
    const out = [];
    for (let at = 0; at < buf.length; at += chunk) {
      blake.init();
      blake.update(buf.subarray(at, at + chunk));
      out.push(blake.digest("binary"));
    }
    return out;
  };
  const peerSHA = () => {
    sha.init();
    sha.update(buf);
    return sha.digest("hex");
  };
  const runs = {
    "BLAKE3 64 KiB chunks, hash-wasm": peerChunks,
    "BLAKE3 64 KiB chunks, xetkit kernels on": () => on.hash.chunks(buf, lens),
    "BLAKE3 64 KiB chunks, xetkit kernels off": () => off.hash.chunks(buf, lens),
    "SHA-256 of 64 MiB, hash-wasm": peerSHA,
    "SHA-256 of 64 MiB, xetkit kernels on": () => on.hash.sha256(buf),
    "SHA-256 of 64 MiB, xetkit kernels off": () => off.hash.sha256(buf),
  };
  // The results must agree before any figure counts.
  if (peerSHA() !== on.hash.sha256(buf) || peerSHA() !== off.hash.sha256(buf)) throw new Error("SHA-256 results differ");
  const raw = new Uint8Array(32 * lens.length);
  peerChunks().forEach((h, i) => raw.set(h, 32 * i));
  const peer = on.hashStrings(raw);
  const ours = on.hash.chunks(buf, lens);
  if (peer.join() !== ours.join() || ours.join() !== off.hash.chunks(buf, lens).join()) throw new Error("BLAKE3 results differ");
  const names = Object.keys(runs);
  const best = Object.fromEntries(names.map((n) => [n, 0]));
  for (const n of names) runs[n](); // warm up (JIT tiers)
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...names].reverse() : names;
    for (const n of order) {
      const t = performance.now();
      runs[n]();
      best[n] = Math.max(best[n], buf.length / 1e3 / (performance.now() - t));
    }
  }
  const pad = Math.max(...names.map((n) => n.length));
  const ratio = (a, b) => (best[a] / best[b]).toFixed(2);
  for (const n of names) log(`  ${n.padEnd(pad)} ${best[n].toFixed(0).padStart(5)} MB/s`);
  log(`  BLAKE3: kernels on ${ratio(names[1], names[0])}x hash-wasm (target >= 1.2x), off ${ratio(names[2], names[0])}x`);
  log(`  SHA-256: kernels on ${ratio(names[4], names[3])}x hash-wasm (target >= 1.0x), off ${ratio(names[5], names[3])}x`);
  return best;
}
