// Interop with @huggingface/hub's Xet client (its TypeScript sources,
// bundled here with esbuild since uploadShards and parseShardData are not
// exported from the package's entry point):
//
//   - files uploaded by uploadShards through the local hub's token endpoint
//     come back byte-identical from `xetkit download`;
//   - a second upload of the same files is deduplicated through the local
//     hub's global dedupe answers (no new xorb bytes);
//   - a dedupe shard from the local hub is read correctly by parseShardData.
//
// Run from the checkout: node --test hub/interop/
// Needs Go and the dev dependencies (npm ci).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createHash, randomBytes } from "node:crypto";
import * as esbuild from "esbuild";
import { root, startServer } from "../../test/common.mjs";

const hubSrc = join(root, "node_modules", "@huggingface", "hub", "src", "utils");
const token = "hf_interop_user_token";
const repo = "alice/interop";

let work, xetkit, server, hubURL, hf;

// Test files: random bytes of a few sizes and a smooth float32 signal.
const files = {};
function addFile(name, bytes) {
	files[name] = { bytes, path: null, xetHash: null };
}
addFile("one-byte", randomBytes(1));
addFile("random-100k", randomBytes(100 << 10));
addFile("random-3m", randomBytes(3 << 20));
{
	const f = new Float32Array(512 << 10);
	for (let i = 0; i < f.length; i++) f[i] = Math.sin(i / 1000);
	addFile("float32-2m", new Uint8Array(f.buffer));
}

function run(args, opts = {}) {
	return execFileSync(xetkit, args, { encoding: opts.encoding ?? "utf8", maxBuffer: 1 << 28 });
}

async function stats() {
	const r = await fetch(`${hubURL}/_xetkit/stats`);
	return r.json();
}

async function* sources() {
	for (const [name, f] of Object.entries(files)) {
		const sha256 = createHash("sha256").update(f.bytes).digest("hex");
		yield { content: new Blob([f.bytes]), path: name, sha256 };
	}
}

async function uploadAll() {
	const params = {
		accessToken: token,
		hubUrl: hubURL,
		repo: { type: "model", name: repo },
		rev: "main",
		xetParams: { refreshWriteTokenUrl: `${hubURL}/api/models/${repo}/xet-write-token/main` },
	};
	const out = {};
	for await (const ev of hf.uploadShards(sources(), params)) {
		if (ev.event === "file") out[ev.path] = ev;
	}
	return out;
}

before(async () => {
	work = mkdtempSync(join(tmpdir(), "xetkit-interop-"));
	xetkit = join(work, "xetkit");
	execFileSync("go", ["build", "-o", xetkit, "./cmd/xetkit"], { cwd: root, stdio: "inherit" });

	server = await startServer({ token, binary: xetkit });
	hubURL = server.origin;

	const bundle = await esbuild.build({
		stdin: {
			contents: `export { uploadShards } from ${JSON.stringify(join(hubSrc, "uploadShards.ts"))};
export { parseShardData } from ${JSON.stringify(join(hubSrc, "shardParser.ts"))};`,
			resolveDir: root,
			loader: "ts",
		},
		bundle: true,
		platform: "node",
		format: "esm",
		write: false,
		logLevel: "error",
	});
	const out = join(work, "hf-bundle.mjs");
	writeFileSync(out, bundle.outputFiles[0].contents);
	hf = await import(pathToFileURL(out).href);

	for (const [name, f] of Object.entries(files)) {
		f.path = join(work, name);
		writeFileSync(f.path, f.bytes);
	}
});

after(async () => {
	await server?.stop();
	if (work) rmSync(work, { recursive: true, force: true });
});

test("uploadShards → xetkit download gives the same bytes", async () => {
	const events = await uploadAll();
	for (const [name, f] of Object.entries(files)) {
		const ev = events[name];
		assert.ok(ev, `no file event for ${name}`);
		// The file hash is not compared with `xetkit hash`: @huggingface/xetchunk-wasm
		// 0.2.0 cuts chunks of 8128 bytes that the reference does not (see
		// chunking/chunking.go), so the two may chunk a file differently. The
		// hub checks that the hash matches the chunks the shard names.
		f.xetHash = ev.xetHash;
		const dst = join(work, `${name}.out`);
		run(["download", "--hub", hubURL, "--repo", repo, "--token", token, "--hash", ev.xetHash, "-o", dst]);
		assert.deepEqual(readFileSync(dst), Buffer.from(f.bytes), `${name}: downloaded bytes differ`);
	}
	const st = await stats();
	assert.ok(st.shardsStored >= 1 && st.xorbsStored >= 1, JSON.stringify(st));
});

test("a second uploadShards sends no xorb bytes (global dedupe through the local hub)", async () => {
	const before = await stats();
	const events = await uploadAll();
	const after = await stats();
	for (const name of Object.keys(files)) assert.equal(events[name]?.xetHash, files[name].xetHash);
	assert.ok(after.dedupeHits > before.dedupeHits, `no dedupe hit: ${JSON.stringify(after)}`);
	assert.equal(after.xorbBytesReceived, before.xorbBytesReceived, "xorb bytes were sent again");
});

test("parseShardData reads a dedupe shard of the local hub", async () => {
	// The first chunk as the uploader cut it (xetchunk-wasm may cut it
	// shorter than xetkit chunk would; see the first test).
	const { createChunker, nextBlock, finalize, hmac, hexToBytes, hashToHex } = await import("@huggingface/xetchunk-wasm");
	const f = files["random-3m"];
	const chunker = createChunker(64 << 10);
	const chunks = [...nextBlock(chunker, f.bytes)];
	const tail = finalize(chunker);
	if (tail) chunks.push(...(Array.isArray(tail) ? tail : [tail]));
	const firstChunk = hashToHex(chunks[0].hash);
	const tok = await (await fetch(`${hubURL}/api/models/${repo}/xet-read-token/main`, { headers: { Authorization: `Bearer ${token}` } })).json();
	const resp = await fetch(`${tok.casUrl}/v1/chunks/default-merkledb/${firstChunk}`, { headers: { Authorization: `Bearer ${tok.accessToken}` } });
	assert.equal(resp.status, 200);
	const bytes = new Uint8Array(await resp.arrayBuffer());
	const parsed = await hf.parseShardData(new Blob([bytes]));

	// The same shard as xetkit reads it.
	const shardFile = join(work, "dedupe.shard");
	writeFileSync(shardFile, bytes);
	const ours = JSON.parse(run(["shard", "parse", shardFile]));
	assert.equal(parsed.hmacKey, ours.footer.chunkHashKey);
	assert.notEqual(parsed.hmacKey, "0".repeat(64));
	assert.equal(parsed.xorbs.length, ours.xorbs.length);
	for (const [i, x] of parsed.xorbs.entries()) {
		assert.equal(x.hash, ours.xorbs[i].hash);
		assert.deepEqual(
			x.chunks.map((c) => [c.hash, c.startOffset, c.unpackedLength]),
			ours.xorbs[i].chunks.map((c) => [c.hash, c.byteRangeStart, c.unpackedBytes]),
		);
	}
	// The queried chunk is in it, keyed: only a holder of the chunk finds it.
	const keyed = hashToHex(hmac(hexToBytes(firstChunk), hexToBytes(parsed.hmacKey)));
	assert.ok(parsed.xorbs.some((x) => x.chunks.some((c) => c.hash === keyed)), "queried chunk not found by its keyed hash");
	assert.ok(!parsed.xorbs.some((x) => x.chunks.some((c) => c.hash === firstChunk)), "a raw chunk hash was revealed");
});

test("xetkit's JS API in Node: its uploads come back from `xetkit download`, and uploadShards' files from xk.download", async () => {
	// The module as built by scripts/build-wasm.sh; upload and download run
	// Go's client over Node's fetch.
	const { load } = await import(pathToFileURL(join(root, "wasm", "xetkit.js")).href);
	const xk = await load({ workers: 2 });
	try {
		const names = Object.keys(files);
		const { files: res } = await xk.upload(names.map((name) => ({ path: name, content: new Blob([files[name].bytes]) })), { hub: hubURL, repo, token });
		for (const [i, name] of names.entries()) {
			const f = files[name];
			assert.equal(res[i].sha256, createHash("sha256").update(f.bytes).digest("hex"), name);
			const dst = join(work, `${name}.xk`);
			if (res[i].hash !== null) { // null: a small text file, committed inline (not in CAS)
				run(["download", "--hub", hubURL, "--repo", repo, "--token", token, "--hash", res[i].hash, "-o", dst]);
				assert.deepEqual(readFileSync(dst), Buffer.from(f.bytes), `${name}: xk.upload → xetkit download`);
			}
			run(["download", "--hub", hubURL, "--repo", repo, "--token", token, name, "-o", dst]);
			assert.deepEqual(readFileSync(dst), Buffer.from(f.bytes), `${name}: xk.upload → xetkit download by path`);
			if (f.xetHash) {
				const back = await xk.download(f.xetHash, { hub: hubURL, repo, token });
				assert.deepEqual(Buffer.from(back), Buffer.from(f.bytes), `${name}: uploadShards → xk.download`);
			}
		}
	} finally {
		xk.close();
	}
});
