// Deterministic test inputs shared by the Node cross-check tests: sizes
// around every chunking limit, and content of the kinds real uploads carry.

import { rng, randomBytes } from "./common.mjs";

export { randomBytes };

function pattern(n, unit) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = unit[i % unit.length];
  return out;
}

function text(n) {
  const words = ["xet", "chunk", "shard", "xorb", "hash", "merkle", "dedupe", "upload", "the", "of", "a", "browser"];
  const next = rng(42);
  let s = "";
  while (s.length < n) {
    const w = words[next() % words.length];
    s += w + (next() % 11 === 0 ? ".\n" : " ");
  }
  return new TextEncoder().encode(s.slice(0, n));
}

function float32(n) {
  const count = Math.floor(n / 4);
  const f = new Float32Array(count);
  const next = rng(7);
  for (let i = 0; i < count; i++) f[i] = Math.sin(i / 300) * 0.02 + (next() % 1000) * 1e-6;
  const out = new Uint8Array(n);
  out.set(new Uint8Array(f.buffer));
  return out;
}

// corpus returns [{name, bytes}] covering sizes 0, 1, 8191..8193,
// 131071..131073 and several MiB, over random, zero, repeating-pattern,
// text and float32 content.
export function corpus() {
  const items = [];
  for (const n of [0, 1, 8191, 8192, 8193, 131071, 131072, 131073]) {
    items.push({ name: `random-${n}`, bytes: randomBytes(n, n + 1) });
  }
  const MiB = 1 << 20;
  items.push({ name: "random-12MiB", bytes: randomBytes(12 * MiB + 333, 99) });
  items.push({ name: "zeros-3MiB", bytes: new Uint8Array(3 * MiB) });
  items.push({ name: "zeros-131073", bytes: new Uint8Array(131073) });
  items.push({ name: "pattern-abc-2MiB", bytes: pattern(2 * MiB, [0x61, 0x62, 0x63]) });
  items.push({ name: "pattern-257-2MiB", bytes: pattern(2 * MiB, randomBytes(257, 5)) });
  items.push({ name: "text-3MiB", bytes: text(3 * MiB + 17) });
  items.push({ name: "float32-4MiB", bytes: float32(4 * MiB + 8) });
  return items;
}
