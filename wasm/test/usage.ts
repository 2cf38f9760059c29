// Type-checked (never run) by "npx tsc -p wasm/test": uses every part of
// xetkit.d.ts the way an application would, so a declaration that drifts
// from the API breaks the build.
import { load, XetkitError } from "../xetkit.js";
import type { Chunk, FieldSpan, ParsedShard, ProcessedFile, SealedXorb, ShardFinding, ShardSpec, Xetkit, UploadProgress, UploadResult, UploadedFile, RepoEntry, LazyBlob, PendingUpload, ResumeStore, StoreCall } from "../xetkit.js";

async function main(): Promise<void> {
  const xk: Xetkit = await load({ workers: 2, wasmURL: new URL("../xetkit.wasm", import.meta.url) });
  const compiled: Xetkit = await load({ wasmModule: await WebAssembly.compile(new Uint8Array(8)), workers: 0 });
  const portable: Xetkit = await load({ kernels: false });
  const simd: boolean = portable.kernels;
  compiled.close();
  const bytes = new Uint8Array(1000);
  const chunks: Chunk[] = xk.chunk(bytes);
  const first: { offset: number; length: number; hash: string } = chunks[0];
  xk.chunk(bytes.buffer);
  xk.chunk(new DataView(bytes.buffer));

  const c = xk.createChunker();
  const pushed: Chunk[] = [...c.push(bytes), ...c.finish()];

  const h: string = xk.hash.chunk(bytes);
  const hs: string[] = xk.hash.chunks(bytes, [1, 2]);
  const hs32: string[] = xk.hash.chunks(bytes, Uint32Array.of(3));
  const f: string = xk.hash.file(chunks);
  const x: string = xk.hash.xorb([{ hash: h, size: 10 }, { hash: h, length: 3 }]);
  const v: string = xk.hash.verification(chunks.map((ch) => ch.hash));
  const k: string = xk.hash.keyed(f, h);
  const oid: string = xk.hash.sha256(new Uint8Array(4));

  const spec: ShardSpec = {
    files: [{ sha256: "00".repeat(32), verification: true, terms: [{ xorb: x, chunkStart: 0, chunkEnd: 1 }] }],
    xorbs: [{ bytesOnDisk: 0, chunks: [{ hash: h, unpackedBytes: 1000, flags: 0 }] }],
    footer: null,
  };
  const shard: Uint8Array = xk.buildShard(spec);
  // Outputs are Uint8Array<ArrayBuffer>, which a Blob takes under TS 5.9.
  const shardBlob = new Blob([xk.buildShard(spec)]);
  console.log(shardBlob.size);
  xk.buildShard(JSON.stringify(spec));
  const parsed: ParsedShard = xk.parseShard(shard, { upload: true });
  const offThread: ShardFinding[] = await xk.validateShardAsync(shard, { upload: true });
  console.log(offThread.length);
  const verification: string[] | null = parsed.files[0].verification;
  const severity: "error" | "warning" | "info" | undefined = parsed.findings[0]?.severity;
  const footerKey: string | undefined = parsed.footer?.chunkHashKey;
  const findings = xk.validateShard(shard, { upload: true });
  const rules: string[] = findings.map((f) => f.rule);
  xk.parseShard(shard, { validate: false });
  const packed = xk.parseShard(shard, { validate: false, packedChunks: true });
  const firstSize: number = packed.chunkRows.unpackedBytes[packed.chunkRows.xorbStart[0]];
  void firstSize;
  const spans: FieldSpan[] = xk.shardFields(shard, { part: "term", at: parsed.files[0].offset, index: 0 });
  const header: FieldSpan[] = xk.shardFields(shard, { part: "header" });
  const rowHashes: string[] = xk.hashStrings(packed.chunkRows.hashes);
  const kind: "shard" | "xorb" | "file" = xk.kindOf(shard);
  const entry: number = xk.shardEntryAt(parsed.files[0].offset, parsed.files[0].offset + 60);
  const flagText: string = xk.shardFlags("chunk", 0);
  console.log(spans[0].name, spans[0].offset + spans[0].size, spans[0].value, header.length, rowHashes.length, kind, entry, flagText);

  const px = xk.parseXorb(bytes, { verify: false });
  const xh: string | null = px.hash;
  const sizes: number[] = px.chunks.map((ch) => ch.uncompressedSize);
  const record: FieldSpan[] = xk.xorbFields(bytes, px.chunks[0].offset);
  console.log(record.map((f) => f.value));

  const async1: Chunk[] = await xk.chunkAsync(new Blob([bytes]), { signal: new AbortController().signal });
  const sealed: SealedXorb[] = [];
  const res: ProcessedFile = await xk.processFile(new Blob([bytes]), {
    onProgress: (p) => console.log(p.bytesProcessed / p.totalBytes, p.xorbs),
    onXorb: async (xorb) => { sealed.push(xorb); },
    compression: "lz4",
    workers: true,
  });
  const fileShard: Uint8Array = res.shard;
  const sha: string = res.sha256;
  const term: number = res.terms[0].chunkEnd;
  const mem = await xk.memory();
  const total: number = mem.wasm + mem.workers.reduce((a, b) => a + b, 0);
  const n: number = xk.workers;
  xk.close();

  try {
    xk.parseShard(new Uint8Array(3));
  } catch (e) {
    if (e instanceof XetkitError) {
      const code: "TYPE" | "VALUE" | "RANGE" | "FORMAT" | "STATE" | "INTERNAL" | "LOAD" | "HTTP" | "AUTH" | "NOT_FOUND" | "VERIFY" | "NETWORK" | "ABORT" = e.code;
      const status: number | undefined = e.status;
      const offset: number | undefined = e.offset;
      console.log(code, offset, status, e.message);
    }
  }
  console.log(rules, first, pushed, k, oid, v, verification, severity, footerKey, xh, sizes, async1, fileShard, sha, term, total, n);
}

void main();

// upload and download (wasm/upload.go)
async function transfer(xk: Xetkit, file: File): Promise<void> {
  const ac = new AbortController();
  const up: UploadResult = await xk.upload([file, { path: "data/a.bin", content: new Uint8Array(1) }, { path: "notes.txt", content: "hi" }], {
    repo: "alice/data", repoType: "dataset", token: "hf_x", hub: "http://127.0.0.1:8080", signal: ac.signal,
    commit: { message: "add files" }, prefix: "v1/",
    onProgress: (p: UploadProgress) => console.log(p.file, p.index, p.read, p.hashed, p.deduped, p.uploaded, p.total, p.done),
  });
  const cas: UploadResult = await xk.upload([new Blob(["x"]), new Uint8Array(3)], { repo: "alice/data", commit: false });
  const f: UploadedFile = up.files[0];
  const oid: string | undefined = up.commit?.oid;
  const hash: string | null = cas.files[0].hash;
  const bytes: Uint8Array = await xk.download({ path: f.path }, { repo: "alice/data", repoType: "dataset", range: { start: 0, end: 10 } });
  const blob: Blob = await xk.download(hash ?? "", { repo: "alice/data", as: "blob", onProgress: (p) => console.log(p.written) });
  const stream: ReadableStream<Uint8Array> = await xk.download({ path: f.path }, { repo: "alice/data", as: "stream" });
  const count: number = await xk.download({ path: f.path }, { repo: "alice/data", to: new WritableStream<Uint8Array>() });
  const handle = await (await navigator.storage.getDirectory()).getFileHandle("f.bin", { create: true });
  const written: number = await xk.download({ path: f.path }, { repo: "alice/data", to: handle });
  const entries: RepoEntry[] = await xk.listFiles({ repo: "alice/data", repoType: "dataset", path: "v1", recursive: false });
  const pending: PendingUpload[] = await xk.pendingUploads();
  const none: PendingUpload[] = await xk.pendingUploads({ resume: false });
  // A store of one's own: plain promises, or calls that say at once when they are done.
  const kept = new Map<string, Uint8Array>();
  const plain: ResumeStore = {
    list: async () => [...kept].map(([k, b]) => ({ scope: k.split("/")[0], name: k.split("/")[1], size: b.length })),
    read: async (scope, name) => kept.get(`${scope}/${name}`) ?? null,
    write: async (scope, name, b) => { kept.set(`${scope}/${name}`, b.slice()); },
    remove: async (scope, name) => { kept.delete(`${scope}/${name}`); },
  };
  const now = (): StoreCall => Object.assign(Promise.resolve(), { done: () => true });
  const quick: ResumeStore = {
    ...plain,
    write: (scope, name, b) => { kept.set(`${scope}/${name}`, b.slice()); return now(); },
    rename: async (scope, from, to) => { kept.set(`${scope}/${to}`, kept.get(`${scope}/${from}`)!); kept.delete(`${scope}/${from}`); },
  };
  await xk.upload([file], { repo: "alice/data", resume: plain });
  await xk.upload([file], { repo: "alice/data", resume: quick });
  console.log(pending[0]?.repo?.repo, pending[0]?.bytes, pending[0]?.last.getTime(), none.length, f.resumedBytes);
  console.log(f.path, f.size, f.sha256, f.dedupedBytes, f.uploadedBytes, oid, bytes.length, blob.size, stream.locked, count, entries[0]?.xetHash, entries[0]?.lfs?.oid);
  const lazy: LazyBlob = await xk.open({ path: "model.safetensors" }, { repo: "alice/data", repoType: "dataset", revision: "main", token: "hf_x", hub: "http://127.0.0.1:8080", type: "application/octet-stream" });
  const head: LazyBlob = lazy.slice(0, 8, "application/x-safetensors-header");
  const headerLength: bigint = new DataView(await head.arrayBuffer()).getBigUint64(0, true);
  const json: string = await lazy.slice(8, 8 + Number(headerLength)).text();
  const first: Uint8Array = await lazy.slice(-100).bytes();
  const pieces: ReadableStream<Uint8Array> = lazy.stream();
  const fileHash: string | null = lazy.hash;
  // Code typed to read a Blob takes it as it is.
  const readsBlobs = async (b: Blob): Promise<number> => (await b.slice(0, 4).arrayBuffer()).byteLength;
  await readsBlobs(lazy);
  console.log(lazy.size, lazy.type, lazy.path, head.size, json.length, first.length, pieces.locked, fileHash);
}
void transfer;

// @ts-expect-error: chunk takes bytes, not strings
load().then((xk) => xk.chunk("text"));
// @ts-expect-error: an unknown compression
load().then((xk) => xk.processFile(new Uint8Array(1), { compression: "zstd" }));
// @ts-expect-error: open takes {path}, not a file hash
load().then((xk) => xk.open("0".repeat(64), { repo: "a/b" }));
// @ts-expect-error: upload needs options.repo
load().then((xk) => xk.upload([new Uint8Array(1)], {}));

// xetkit/core: the formats alone, typed by core.d.ts.
import { load as loadCore, type XetkitCore } from "../core.js";
async function core(): Promise<string> {
  const c: XetkitCore = await loadCore({ workers: 0 });
  const chunks = c.chunk(new Uint8Array(10));
  const parsed = c.parseShard(c.buildShard({ files: [], xorbs: [], footer: null }));
  const findings: Promise<import("../core.js").ShardFinding[]> = c.validateShardAsync(new Uint8Array(0));
  void findings;
  // @ts-expect-error: the core module has no transfers
  c.upload([], { hub: "", repo: "" });
  return c.hash.file(chunks) + parsed.header.appId;
}
void core;
