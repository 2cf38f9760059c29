// The full module's API: the Xetkit object "xetkit"'s load() resolves to,
// the formats (core-api.js) and, on top, the worker pool's chunking, the
// pipeline (processFile) and transfers (transfers.js).

import { callAsync, checkSignal, hashString, held, isBlob, progressEvents, toBytes, typeError } from "./calls.js";
import { appendChunks, XetkitCore } from "./core-api.js";
import { downloadFile, downloadTo, LazyBlob, openFiles, pendingUploads, streamSink, transferOptions, uploadFiles } from "./transfers.js";

function sourceOf(input, what) {
  if (isBlob(input)) return input;
  return toBytes(input, what + " (or a Blob)");
}

function sourceSize(src) {
  return isBlob(src) ? src.size : src.length;
}

export class Xetkit extends XetkitCore {
  #go;
  #pools;

  constructor(go, pools) {
    super(go, pools);
    this.#go = go;
    this.#pools = pools;
  }

  /** Like chunk, with chunk hashing spread over the worker pool (if the instance has one). Accepts a Blob too. */
  async chunkAsync(input, options = {}) {
    const src = sourceOf(input, "chunkAsync: input");
    if (options === null || typeof options !== "object") throw typeError("chunkAsync: options must be an object");
    const { signal } = options;
    checkSignal(signal, "chunkAsync");
    return held(() => this.#chunkAsync(src, signal), signal);
  }

  async #chunkAsync(src, signal) {
    const pool = await this.#pools.pool();
    const out = [];
    appendChunks(out, await callAsync(this.#go, "chunkStream", src, { signal }, pool?.offload(null)), 0);
    return out;
  }

  /**
   * Prepares a file for upload: chunks, chunk hashes, file hash, SHA-256,
   * xorbs (handed to onXorb as soon as each is sealed) and the upload-form
   * shard. The input is read in slices, so memory stays bounded.
   */
  async processFile(input, options = {}) {
    const src = sourceOf(input, "processFile: input");
    if (options === null || typeof options !== "object") throw typeError("processFile: options must be an object");
    const { onProgress, onXorb, compression = "auto" } = options;
    if (onProgress !== undefined && typeof onProgress !== "function") throw typeError("processFile: onProgress must be a function");
    if (onXorb !== undefined && typeof onXorb !== "function") throw typeError("processFile: onXorb must be a function");
    if (typeof compression !== "string") throw typeError("processFile: compression must be a string");
    const useWorkers = options.workers === undefined ? true : options.workers;
    const pool = useWorkers ? await this.#pools.pool() : null;
    const total = sourceSize(src);
    let xorbs = 0;
    // The upload pipeline itself, with a collector for a hub: the xorbs
    // and the shard are what upload() with the same options would send.
    const events = {
      signal: options.signal,
      onXorb: async (x) => {
        xorbs++;
        if (onXorb) await onXorb(x);
      },
      xorbBytes: onXorb !== undefined,
    };
    if (onProgress) events.onProgress = progressEvents((p) => onProgress({ bytesProcessed: p.hashed, totalBytes: total, xorbs }));
    const opts = { compression, xorbSize: options.xorbSize };
    checkSignal(options.signal, "processFile");
    const files = [{ name: "file", data: src }];
    const { result, chunks: packedChunks, shard } = await held(() => callAsync(this.#go, "processFile", files, opts, events, pool?.offload(compression)), options.signal);
    result.xorbs ??= [];
    result.terms ??= [];
    result.chunks = [];
    appendChunks(result.chunks, packedChunks, 0);
    result.shard = shard;
    if (onProgress) onProgress({ bytesProcessed: total, totalBytes: total, xorbs });
    return result;
  }

  // ---- upload and download (owner: wasm/upload.go; see the section below the class) ----

  /**
   * Uploads files into a repository and commits them (commit: false: to
   * CAS only): {commit: {oid, url} | null, files: [{path, size, hash,
   * sha256, dedupedBytes, uploadedBytes, resumedBytes}]}. It resumes an
   * interrupted upload of the same files (options.resume, xetkit.d.ts).
   * Chunk hashing, compression
   * and the SHA-256 run on the worker pool (if the instance has one).
   */
  async upload(files, options = {}) {
    return held(async () => uploadFiles(this.#go, await this.#pools.pool(), files, options), options?.signal);
  }

  /**
   * Downloads a file, verified, by its path ({path}) on a revision or by
   * its file hash: a Uint8Array (or a Blob with as: "blob").
   */
  async download(target, options = {}) {
    if (options?.as === "stream") {
      // The stream is returned at once; the download fills it as the
      // reader takes its bytes (and keeps Node alive until it is done).
      checkSignal(options.signal, "download");
      const ts = new TransformStream();
      const writer = ts.writable.getWriter();
      held(() => downloadTo(this.#go, target, options, streamSink(writer)), options.signal).catch(() => {});
      return ts.readable;
    }
    return held(() => downloadFile(this.#go, target, options), options?.signal);
  }

  /**
   * The unfinished uploads the upload state holds (options.resume: the
   * store, as upload takes it), one per repository, the latest first:
   * [{scope, repo: {hub, repoType, repo} | null, xorbs, bytes, first, last}].
   */
  async pendingUploads(options = {}) {
    return held(() => pendingUploads(this.#go, options));
  }

  /**
   * How the hub rebuilds a file (by its file hash): its terms, each a run of
   * chunks [start, end) of one xorb and its bytes, as the hub gives them.
   */
  async fileTerms(fileHash, options = {}) {
    hashString(fileHash, "fileTerms: fileHash");
    const opts = transferOptions(options, "fileTerms");
    opts.signal = options.signal;
    return held(() => callAsync(this.#go, "fileTerms", fileHash, opts), options.signal);
  }

  /** Lists a repository's files and folders at a revision (under options.path). */
  async listFiles(options = {}) {
    const opts = transferOptions(options, "listFiles");
    if (options.path !== undefined && typeof options.path !== "string") throw typeError("listFiles: options.path must be a string");
    opts.path = options.path ?? "";
    opts.recursive = options.recursive ?? true;
    opts.signal = options.signal;
    return held(() => callAsync(this.#go, "listFiles", opts), options.signal);
  }

  /**
   * Opens a file by its path on a revision, lazily: a Blob-like LazyBlob
   * whose reads fetch only the chunks under them, each checked, through
   * the module's verified reader (see openFile in wasm/open.go).
   */
  async open(target, options = {}) {
    if (target === null || typeof target !== "object" || typeof target.path !== "string" || target.path === "") {
      throw typeError("open: the target must be {path} naming a file in the repository");
    }
    const opts = transferOptions(options, "open");
    opts.signal = options.signal;
    const type = options.type ?? "";
    if (typeof type !== "string") throw typeError("open: options.type must be a string");
    return held(async () => {
      const r = await callAsync(this.#go, "openFile", { path: target.path }, opts);
      const core = { go: this.#go, handle: r.handle, path: target.path, hash: r.hash || null };
      openFiles.register(core, { go: this.#go, handle: r.handle });
      return new LazyBlob(core, 0, r.size, type);
    }, options.signal);
  }

  // ---- end of upload and download ----
}
