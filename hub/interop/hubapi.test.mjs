// @huggingface/hub, unmodified and through its public functions, against
// `xetkit serve` as a local Hub; and crossing over: what the peer uploads,
// xetkit downloads by path (CLI), and what xetkit uploads, the peer
// downloads, byte for byte.
//
// Run from the checkout: node --test hub/interop/hubapi.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash, randomBytes } from "node:crypto";
import * as hf from "@huggingface/hub";
import { root, startServer } from "../../test/common.mjs";

const accessToken = "hf_interop_hub_token";
let work, xetkit, server, hubUrl;

function run(args) {
	return execFileSync(xetkit, args, { encoding: "utf8", maxBuffer: 1 << 28 });
}
const sha256 = (b) => createHash("sha256").update(b).digest("hex");
const bytesOf = async (blob) => new Uint8Array(await blob.arrayBuffer());

before(async () => {
	work = mkdtempSync(join(tmpdir(), "xetkit-hubapi-"));
	xetkit = join(work, "xetkit");
	execFileSync("go", ["build", "-o", xetkit, "./cmd/xetkit"], { cwd: root, stdio: "inherit" });
	server = await startServer({ token: accessToken, binary: xetkit });
	hubUrl = server.origin;
});

after(async () => {
	await server?.stop();
	if (work) rmSync(work, { recursive: true, force: true });
});

const weights = new Uint8Array(randomBytes(5 << 20));
const card = new TextEncoder().encode("---\nlicense: mit\n---\n# A test model\n");

test("createRepo, uploadFiles, listFiles, pathsInfo, fileDownloadInfo, downloadFile", async () => {
	const repo = { type: "model", name: "alice/peer-model" };
	const who = await hf.whoAmI({ accessToken, hubUrl });
	assert.equal(who.type, "user");
	const created = await hf.createRepo({ repo, accessToken, hubUrl });
	assert.equal(created.repoUrl, `${hubUrl}/alice/peer-model`);
	await assert.rejects(hf.createRepo({ repo, accessToken, hubUrl }), /already/);

	const out = await hf.uploadFiles({
		repo, accessToken, hubUrl,
		files: [
			{ path: "weights/model.bin", content: new Blob([weights]) },
			{ path: "weights/copy.bin", content: new Blob([weights]) },
			{ path: "README.md", content: new Blob([card]) },
		],
	});
	assert.match(out.commit.oid, /^[0-9a-f]{40}$/);

	const listed = [];
	for await (const e of hf.listFiles({ repo, recursive: true, accessToken, hubUrl })) listed.push(e);
	assert.deepEqual(listed.map((e) => `${e.type} ${e.path}`), ["file .gitattributes", "file README.md", "directory weights", "file weights/copy.bin", "file weights/model.bin"]);
	// The hub names each big file the API commits in .gitattributes, so a git
	// clone checks it out through git-lfs rather than as its pointer.
	const attrs = new TextDecoder().decode(await bytesOf(await hf.downloadFile({ repo, path: ".gitattributes", accessToken, hubUrl })));
	for (const p of ["weights/model.bin", "weights/copy.bin"]) assert.match(attrs, new RegExp(`^/${p.replace(".", "\\.")} filter=lfs diff=lfs merge=lfs -text$`, "m"));
	assert.doesNotMatch(attrs, /README/);
	const model = listed.find((e) => e.path === "weights/model.bin");
	assert.equal(model.size, weights.length);
	assert.equal(model.lfs.oid, sha256(weights));
	// The peer chunks with @huggingface/xetchunk-wasm, whose getChunks cuts
	// chunks below the 8 KiB minimum (see test/crosscheck.test.mjs), so its
	// file hash of random data is not the reference's (`xetkit hash`). The
	// hub keeps the hash the peer uploaded; xetkit's own uploads are checked
	// against `xetkit hash` in the next test.
	assert.match(model.xetHash, /^[0-9a-f]{64}$/);
	assert.equal(listed.find((e) => e.path === "weights/copy.bin").xetHash, model.xetHash);
	assert.equal(listed.find((e) => e.path === "README.md").lfs, undefined, "README.md went inline");

	const info = await hf.pathsInfo({ repo, paths: ["weights/model.bin", "README.md", "nope"], expand: true, accessToken, hubUrl });
	assert.deepEqual(info.map((e) => e.path).sort(), ["README.md", "weights/model.bin"]);
	assert.equal(info.find((e) => e.path === "weights/model.bin").lastCommit.id, out.commit.oid);

	const dl = await hf.fileDownloadInfo({ repo, path: "weights/model.bin", accessToken, hubUrl });
	assert.equal(dl.size, weights.length);
	assert.equal(dl.xet.hash, model.xetHash, "fileDownloadInfo's xet.hash is the tree's");
	assert.equal(await hf.fileDownloadInfo({ repo, path: "nope", accessToken, hubUrl }), null);

	for (const xet of [true, false]) {
		const blob = await hf.downloadFile({ repo, path: "weights/copy.bin", accessToken, hubUrl, xet });
		assert.equal(sha256(await bytesOf(blob)), sha256(weights), `downloadFile xet=${xet}`);
		const slice = await bytesOf(blob.slice(1_000_000, 1_000_777));
		assert.deepEqual(slice, weights.subarray(1_000_000, 1_000_777), `a slice, xet=${xet}`);
	}
	const text = await hf.downloadFile({ repo, path: "README.md", accessToken, hubUrl });
	assert.deepEqual(await bytesOf(text), card);
	assert.equal(await hf.downloadFile({ repo, path: "missing.bin", accessToken, hubUrl }), null);

	// Crossing over: the peer's upload, downloaded by path with xetkit.
	const dst = join(work, "by-xetkit.bin");
	run(["download", "--hub", hubUrl, "--repo", "alice/peer-model", "--token", accessToken, "weights/model.bin", "-o", dst]);
	assert.equal(sha256(readFileSync(dst)), sha256(weights));
	assert.equal(run(["download", "--hub", hubUrl, "--repo", "alice/peer-model", "--token", accessToken, "README.md", "-o", "-"]), new TextDecoder().decode(card));
});

test("commit with a delete, a dataset repo, and xetkit's uploads downloaded by the peer", async () => {
	const repo = { type: "dataset", name: "bob/data" };
	await hf.createRepo({ repo, accessToken, hubUrl });
	const a = new Uint8Array(randomBytes(300 << 10));
	await hf.uploadFile({ repo, accessToken, hubUrl, file: { path: "a.bin", content: new Blob([a]) } });
	await hf.uploadFile({ repo, accessToken, hubUrl, file: { path: "old.txt", content: new Blob(["old\n"]) } });
	await hf.commit({
		repo, accessToken, hubUrl, title: "replace old.txt",
		operations: [
			{ operation: "delete", path: "old.txt" },
			{ operation: "addOrUpdate", path: "new/one.txt", content: new Blob(["new\n"]) },
		],
	});
	const paths = [];
	for await (const e of hf.listFiles({ repo, recursive: true, accessToken, hubUrl })) if (e.type === "file") paths.push(e.path);
	assert.deepEqual(paths, [".gitattributes", "a.bin", "new/one.txt"]);
	assert.ok(await hf.fileExists({ repo, path: "a.bin", accessToken, hubUrl }));
	assert.ok(!(await hf.fileExists({ repo, path: "old.txt", accessToken, hubUrl })));

	// xetkit uploads into the same dataset; the peer downloads it.
	const mine = new Uint8Array(randomBytes(2 << 20));
	mkdirSync(join(work, "mine"), { recursive: true });
	writeFileSync(join(work, "mine", "x.bin"), mine);
	const printed = run(["upload", "--hub", hubUrl, "--repo", "bob/data", "--type", "dataset", "--token", accessToken, "--quiet", "--prefix", "from-xetkit", join(work, "mine")]);
	assert.match(printed, /^[0-9a-f]{64} [0-9a-f]{64} from-xetkit\/x\.bin\ncommit [0-9a-f]{40} /);
	const dl = await hf.fileDownloadInfo({ repo, path: "from-xetkit/x.bin", accessToken, hubUrl });
	assert.equal(dl.xet.hash, run(["hash", join(work, "mine", "x.bin")]).trim(), "fileDownloadInfo's xet.hash = xetkit hash");
	for (const xet of [true, false]) {
		const blob = await hf.downloadFile({ repo, path: "from-xetkit/x.bin", accessToken, hubUrl, xet });
		assert.equal(sha256(await bytesOf(blob)), sha256(mine), `the peer downloads xetkit's upload, xet=${xet}`);
	}
	const ls = run(["ls", "--hub", hubUrl, "--repo", "bob/data", "--type", "dataset", "--token", accessToken]);
	assert.deepEqual(ls.trim().split("\n").map((l) => l.trim().split(/\s+/)[2]), [".gitattributes", "a.bin", "from-xetkit/x.bin", "new/one.txt"]);
	const info = await hf.datasetInfo({ name: "bob/data", accessToken, hubUrl });
	assert.equal(info.name, "bob/data");
	await hf.deleteRepo({ repo, accessToken, hubUrl });
	await assert.rejects(hf.datasetInfo({ name: "bob/data", accessToken, hubUrl }), /not found/);
});

test("two commits on the same parent: one lands, the other gets 412, nothing is lost", async () => {
	const repo = { type: "model", name: "carol/race" };
	await hf.createRepo({ repo, accessToken, hubUrl });
	const parentCommit = (await hf.modelInfo({ name: "carol/race", accessToken, hubUrl, additionalFields: ["sha"] })).sha;
	assert.match(parentCommit, /^[0-9a-f]{40}$/);
	const attempt = (name) =>
		hf.commit({ repo, accessToken, hubUrl, title: name, parentCommit, operations: [{ operation: "addOrUpdate", path: `${name}.txt`, content: new Blob([name]) }] });
	const results = await Promise.allSettled([attempt("first"), attempt("second")]);
	const won = results.filter((r) => r.status === "fulfilled");
	const lost = results.filter((r) => r.status === "rejected");
	assert.equal(won.length, 1);
	assert.equal(lost[0].reason.statusCode, 412);
	const paths = [];
	for await (const e of hf.listFiles({ repo, accessToken, hubUrl })) paths.push(e.path);
	assert.equal(paths.length, 1, "exactly the winner's file");
	// The loser retries on the new head and lands too.
	const loser = paths[0] === "first.txt" ? "second" : "first";
	await hf.commit({ repo, accessToken, hubUrl, title: loser, operations: [{ operation: "addOrUpdate", path: `${loser}.txt`, content: new Blob([loser]) }] });
	const after = [];
	for await (const e of hf.listFiles({ repo, accessToken, hubUrl })) after.push(e.path);
	assert.deepEqual(after, ["first.txt", "second.txt"]);
});
