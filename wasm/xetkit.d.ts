// Types of wasm/xetkit.js. Hashes are XET strings: 64 lowercase hex digits
// (draft-denis-xet §6.5).

/** What went wrong, as XetkitError.code. */
export type XetkitErrorCode =
  | "TYPE" // an argument of the wrong type
  | "VALUE" // a well-typed argument with a bad value (a malformed hash string, a bad spec)
  | "RANGE" // a number or size out of range
  | "FORMAT" // bad serialized bytes; offset says where
  | "STATE" // an object used after it was closed
  | "INTERNAL" // a bug, or the WebAssembly instance died
  | "LOAD" // load() could not fetch, read or compile xetkit.wasm (cause holds the underlying error)
  // upload and download:
  | "HTTP" // the hub answered with an error (status says which), after any retries
  | "AUTH" // the hub refused the token (status 401 or 403)
  | "NOT_FOUND" // the hub does not know the file (status 404)
  | "VERIFY" // downloaded data does not match its hashes
  | "NETWORK" // a request got no answer, after any retries
  | "ABORT"; // the AbortSignal fired

/** The error every xetkit function throws; the module keeps working after it. */
export class XetkitError extends Error {
  constructor(message: string, code: XetkitErrorCode, offset?: number);
  /** "AbortError" for code "ABORT" (an AbortSignal fired; its reason is the cause), else "XetkitError". */
  readonly name: "XetkitError" | "AbortError";
  readonly code: XetkitErrorCode;
  /** For "FORMAT": the byte offset from the start of the input where the problem was found. */
  readonly offset?: number;
  /** For "HTTP", "AUTH" and "NOT_FOUND": the HTTP status. */
  readonly status?: number;
}

/** Bytes as accepted by every function. */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView;

/**
 * Bytes xetkit returns: always backed by a plain ArrayBuffer (never a
 * SharedArrayBuffer), so they go into a Blob or a fetch body as they are.
 */
export type OutBytes = Uint8Array<ArrayBuffer>;

/** One content-defined chunk. */
export interface Chunk {
  /** Where the chunk starts in the stream. */
  offset: number;
  length: number;
  /** The chunk hash (§6.1). */
  hash: string;
}

/** A (hash, size) pair for the merkle hashes; `size` is accepted for `length`. */
export type HashedChunk = { hash: string; length: number } | { hash: string; size: number };

export interface Chunker {
  /** Adds the next bytes of the stream; returns the chunks they complete. */
  push(bytes: Bytes): Chunk[];
  /** Ends the stream and returns its last chunk, if any; the chunker then starts a new stream. */
  finish(): Chunk[];
}

export interface Hashes {
  /** The chunk hash of bytes. */
  chunk(bytes: Bytes): string;
  /**
   * The chunk hashes of bytes cut into consecutive chunks of the given
   * lengths (which must add up to bytes.length): one call for many chunks
   * whose boundaries you already have.
   */
  chunks(bytes: Bytes, lengths: readonly number[] | Uint32Array): string[];
  /** The file hash of chunks in order (an empty file hashes to 64 zeros, as in the reference). */
  file(chunks: readonly HashedChunk[]): string;
  /** The xorb hash (merkle root) of chunks in order. */
  xorb(chunks: readonly HashedChunk[]): string;
  /** The term verification hash of a run of chunk hashes. */
  verification(hashes: readonly string[]): string;
  /** A chunk hash keyed with a shard's chunk hash key (a zero key returns hash unchanged). */
  keyed(key: string, hash: string): string;
  /** The SHA-256 of bytes as 64 lowercase hex digits (the Hub's oid of a file). */
  sha256(bytes: Bytes): string;
}

// ---- ShardSpec (input of buildShard) ----

export interface ShardSpec {
  appId?: string;
  files: ShardSpecFile[];
  xorbs: ShardSpecXorb[];
  footer?: ShardSpecFooter | null;
}

export interface ShardSpecFile {
  hash?: string;
  /** Standard hex SHA-256 digest; absent: no metadata ext. */
  sha256?: string;
  verification: boolean;
  flags?: number;
  terms: ShardSpecTerm[];
}

export interface ShardSpecTerm {
  xorb: string;
  chunkStart: number;
  chunkEnd: number;
  unpackedBytes?: number;
  rangeHash?: string;
  flags?: number;
}

export interface ShardSpecXorb {
  hash?: string;
  flags?: number;
  bytesInXorb?: number;
  bytesOnDisk: number;
  chunks: { hash: string; unpackedBytes: number; flags: number; byteRangeStart?: number }[];
}

export interface ShardSpecFooter {
  createdAt: number;
  keyExpiry: number;
  chunkHashKey: string;
  lookupTables: boolean;
  storedBytesOnDisk?: number;
  materializedBytes?: number;
  storedBytes?: number;
}

// ---- ParsedShard (output of parseShard) ----
// The members between "<generated from shard layouts: …>" and "</generated>"
// are the record fields shard/internal/layouts declares (go generate ./shard).

export interface ParsedShard {
  header: {
    // <generated from shard layouts: header>
    appId: string;
    version: number;
    footerSize: number;
    // </generated>
  };
  files: ParsedShardFile[];
  xorbs: ParsedShardXorb[];
  lookups: {
    /** entry: the stored index, in 48-byte records from the start of the
     *  file info (CAS info) section, as the reference seeks it; file / xorb:
     *  the block that record starts, -1 when it starts none. */
    files: {
      // <generated from shard layouts: fileLookup>
      truncatedHash: string;
      entry: number;
      // </generated>
      file: number;
    }[];
    xorbs: {
      // <generated from shard layouts: casLookup>
      truncatedHash: string;
      entry: number;
      // </generated>
      xorb: number;
    }[];
    chunks: {
      // <generated from shard layouts: chunkLookup>
      truncatedHash: string;
      entry: number;
      chunk: number;
      // </generated>
      xorb: number;
    }[];
  };
  /** null in the upload form. */
  footer: ParsedShardFooter | null;
  /** Rule breaks found in a shard that could be read. */
  findings: ShardFinding[];
  /** Bytes of input. */
  size: number;
  /** The shard's sections in byte order. */
  sections: { name: string; offset: number; size: number }[];
}

/**
 * The chunk rows of all xorbs of a shard, in order, as columns (parseShard
 * with packedChunks). Row r is xorb x's chunk r - xorbStart[x].
 */
export interface PackedChunkRows {
  count: number;
  /** 32 raw bytes a row (a XET string reverses each 8-byte group). */
  hashes: OutBytes;
  // <generated from shard layouts: chunk columns>
  byteRangeStart: Uint32Array<ArrayBuffer>;
  unpackedBytes: Uint32Array<ArrayBuffer>;
  flags: Uint32Array<ArrayBuffer>;
  // </generated>
  /** The first row of each xorb, then count (xorbs.length + 1 entries). */
  xorbStart: Uint32Array<ArrayBuffer>;
}

export interface ParsedShardFile {
  offset: number;
  /** Bytes of the file block in the shard. */
  size: number;
  // <generated from shard layouts: file>
  hash: string;
  flags: number;
  /** entries.length. */
  numEntries: number;
  // </generated>
  /** The sum of the entries' unpackedBytes: the file's size. */
  unpackedBytes: number;
  /** With packedChunks, read from the shard's bytes by the module when first used (see parseShard). */
  entries: {
    // <generated from shard layouts: term>
    xorbHash: string;
    flags: number;
    unpackedBytes: number;
    chunkStart: number;
    chunkEnd: number;
    // </generated>
  }[];
  /** One range hash per entry, or null; with packedChunks read when first used, as entries. */
  verification: string[] | null;
  sha256: string | null;
}

export interface ParsedShardXorb {
  offset: number;
  // <generated from shard layouts: xorb>
  hash: string;
  flags: number;
  numChunks: number;
  bytesInXorb: number;
  bytesOnDisk: number;
  // </generated>
  chunks: {
    // <generated from shard layouts: chunk>
    hash: string;
    byteRangeStart: number;
    unpackedBytes: number;
    flags: number;
    // </generated>
  }[];
}

export interface ParsedShardFooter {
  // <generated from shard layouts: footer>
  version: number;
  fileInfoOffset: number;
  casInfoOffset: number;
  fileLookupOffset: number;
  fileLookupCount: number;
  casLookupOffset: number;
  casLookupCount: number;
  chunkLookupOffset: number;
  chunkLookupCount: number;
  chunkHashKey: string;
  createdAt: number;
  keyExpiry: number;
  storedBytesOnDisk: number;
  materializedBytes: number;
  storedBytes: number;
  footerOffset: number;
  // </generated>
}

export interface ShardFinding {
  severity: "error" | "warning" | "info";
  offset: number;
  section: "header" | "files" | "cas" | "lookups" | "footer";
  /** Which rule is broken. */
  rule: string;
  message: string;
}

// ---- field spans (shardFields, xorbFields) ----

/** One field of a record, for a hex view: where it lies and its value as text (a hash as its XET string). */
export interface FieldSpan {
  name: string;
  offset: number;
  size: number;
  value: string;
}

/**
 * The part of a shard shardFields describes. at: the file block's offset
 * (file, term) or the CAS block's (xorb, chunk), as ParsedShard gives them;
 * index: the term, chunk or lookup entry.
 */
export interface ShardSelection {
  part: "header" | "footer" | "file" | "term" | "xorb" | "chunk" | "fileLookup" | "casLookup" | "chunkLookup";
  at?: number;
  index?: number;
}

// ---- parsed xorb (output of parseXorb) ----

export interface ParsedXorb {
  /** Bytes of input. */
  size: number;
  hasFooter: boolean;
  /** The xorb hash the footer records; null without a footer. */
  hash: string | null;
  /** True once every chunk was decompressed and hashed. */
  verified: boolean;
  /** The xorb hash of the chunks as decompressed; null unless verified. */
  computedHash: string | null;
  chunks: ParsedXorbChunk[];
  footer: unknown | null;
  totalCompressed: number;
  totalUncompressed: number;
  recordsSize: number;
}

export interface ParsedXorbChunk {
  index: number;
  offset: number;
  headerSize: number;
  compressedSize: number;
  uncompressedSize: number;
  unpackedOffset: number;
  compression: "none" | "lz4" | "bg4-lz4";
  compressionType: number;
  /** null unless verified. */
  hash: string | null;
}

// ---- processFile ----

/** A xorb handed out by processFile as soon as it is sealed. */
export interface SealedXorb {
  /** 0, 1, ... in the order sealed. */
  index: number;
  hash: string;
  /** The xorb's chunk records without the footer: the body of its upload, as the reference client sends it. */
  bytes: OutBytes;
  chunks: number;
  unpackedBytes: number;
}

export interface ProcessProgress {
  bytesProcessed: number;
  totalBytes: number;
  /** Xorbs sealed so far. */
  xorbs: number;
}

export interface ProcessOptions {
  onProgress?: (p: ProcessProgress) => void;
  /** Called in order for each xorb; a returned promise is awaited before more is read. */
  onXorb?: (x: SealedXorb) => void | Promise<void>;
  /** Chunk record compression (default "auto": byte-grouped LZ4 where the reference client's predictor says it pays, LZ4 elsewhere; none when compression does not shrink a chunk). */
  compression?: "auto" | "lz4" | "bg4-lz4" | "none";
  /** Chunk data (uncompressed bytes) at which a xorb is sealed (default 8 MiB under WebAssembly, at most 64 MiB, where the reference client cuts). */
  xorbSize?: number;
  /** false: do all the work on this thread's instance, without the worker pool (the default: the instance's pool, if it has one); the bytes are the same either way. */
  workers?: boolean;
  signal?: AbortSignal;
}

export interface ProcessedFile {
  size: number;
  fileHash: string;
  /** Standard hex SHA-256 digest of the file. */
  sha256: string;
  /** Every chunk in file order, repeats included. */
  chunks: Chunk[];
  /** The new xorbs, in the order they were handed to onXorb (without their bytes). */
  xorbs: { hash: string; chunks: number; unpackedBytes: number; size: number }[];
  /** The file's reconstruction terms. */
  terms: { xorb: string; chunkStart: number; chunkEnd: number; unpackedBytes: number }[];
  /** The upload-form shard (no footer) registering the file and its xorbs; empty for an empty file, which needs none. */
  shard: OutBytes;
}

// ---- upload and download (owner: wasm/upload.go) ----

/** Where a transfer goes: a repository of a Xet hub. */
export interface HubOptions {
  /** The hub's base URL (default: the page's origin, where "xetkit serve" runs its hub). */
  hub?: string;
  /** The repository, "namespace/name". */
  repo: string;
  /** "model" (default), "dataset" or "space". */
  repoType?: "model" | "dataset" | "space";
  /** The branch to commit to, or (to read) a branch or a commit id (default "main"). */
  revision?: string;
  /** The user token sent to the hub's token endpoints. */
  token?: string;
  /**
   * Transient failures (429, 5xx but 501 and 507, dropped connections) retried per
   * request (default 7; 0: none). The default waits add up to one to two minutes,
   * so a flaky connection's minute-long outage does not end a transfer.
   */
  retries?: number;
  /** First backoff delay in ms, doubling per retry up to 30 s (default 2000). */
  retryDelayMs?: number;
  /** Most requests in flight at once (default: adapt to the link, 6 at most in a browser: Chromium opens 6 HTTP/1.1 connections to a host). */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * A file to upload: a File (committed at prefix + its name), or {path, content}. With
 * commit: false a nameless Blob or bytes will do too. A stream's length is not known
 * beforehand: one longer than 512 bytes goes through Xet.
 */
export type UploadInput = File | { path: string; content: Blob | Bytes | string | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> } | Blob | Bytes;

export interface UploadProgress {
  /** The file's name and its index among the inputs. */
  file: string;
  index: number;
  /** Bytes read, chunked and hashed so far. */
  read: number;
  hashed: number;
  /** Bytes the hub already had (nothing to send) and bytes of new chunks it has accepted. */
  deduped: number;
  uploaded: number;
  /** The part of deduped found in xorbs an earlier, interrupted upload stored (see resume). */
  resumed: number;
  /** The file's size. */
  total: number;
  /** Set on the file's last event: it is registered and can be downloaded. */
  done: boolean;
}

export interface UploadOptions extends HubOptions {
  /**
   * The commit that puts the files at their paths on the revision (default: a commit titled
   * "Upload with xetkit"). false: store in CAS only; nothing in the repository finds the files.
   */
  commit?: { message?: string } | false;
  /** A folder in the repository the files go into, e.g. "weights/". */
  prefix?: string;
  onProgress?: (p: UploadProgress) => void;
  /** Chunk record compression (default "auto"). */
  compression?: "auto" | "lz4" | "bg4-lz4" | "none";
  /** Chunk data (uncompressed bytes) at which a xorb is sealed (default 8 MiB under WebAssembly, at most 64 MiB, where the reference client cuts); the same size gives processFile's bytes. */
  xorbSize?: number;
  /**
   * Where the upload records each xorb the hub accepts, until the commit lands, so that the
   * same upload started again after an interruption (a killed process, a reload) sends only
   * the rest (progress and results count it as resumed). Default: in Node, the folder the
   * command uses ($XETKIT_CACHE/uploads, else ~/.cache/xetkit/uploads); in a browser, the
   * Origin Private File System (folder xetkit-uploads; written by a worker of its own where the
   * browser lets one write), else IndexedDB (database xetkit-uploads). false: none. A
   * ResumeStore: that store.
   */
  resume?: boolean | ResumeStore;
}

/**
 * Keeps an upload's state: small records, each named within a scope (a hub and repository).
 * Names and scopes are short strings of [0-9a-z.-]. What goes in the records is decided by
 * the module; a store only keeps them.
 */
export interface ResumeStore {
  /** Every record kept, in every scope. */
  list(): Promise<{ scope: string; name: string; size: number }[]>;
  /** A record's bytes, or null when it is not kept. */
  read(scope: string, name: string): Promise<Uint8Array | null>;
  /**
   * Stores a record; resolves once it would survive a crash, and never leaves part of one.
   * Each xorb is sent only once its record is written: see StoreCall for hearing of it sooner.
   */
  write(scope: string, name: string, bytes: Uint8Array): Promise<void> | StoreCall;
  /** Deletes a record (one that is not there is no error). */
  remove(scope: string, name: string): Promise<void> | StoreCall;
  /**
   * Optional: gives a record another name in one step (a crash leaves it whole under one name
   * or the other); a record is confirmed so. Without it, or when it fails, the record is
   * written again under the new name and the first one removed.
   */
  rename?(scope: string, from: string, to: string): Promise<void> | StoreCall;
}

/**
 * What a ResumeStore's write, rename or remove may return instead of a plain promise: a promise that
 * also answers, at once, whether the call has succeeded. An upload keeps the page's thread
 * busy and turns its event loop only now and then (100-250 ms apart in Chromium), so it
 * would hear that a promise resolved, and send the xorb the record names, only that much
 * later; done() is asked without waiting for a turn. The browser's own store returns one
 * where the page is cross-origin isolated (its worker marks each call done in shared memory:
 * see the README on the Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy headers).
 */
export interface StoreCall extends Promise<void> {
  /** True once the call has succeeded (a write: the record would survive a crash); never true for one that fails. */
  done(): boolean;
}

/** What the upload state holds of unfinished uploads to one repository (Xetkit.pendingUploads). */
export interface PendingUpload {
  /** The store's name for the hub and repository. */
  scope: string;
  /** The hub and repository; null when the state does not say (written by an older version). */
  repo: { hub: string; repoType: string; repo: string } | null;
  /** Xorbs the hub accepted and the bytes of file data they hold: what will not be sent again. */
  xorbs: number;
  bytes: number;
  /** Xorbs being sent when the upload stopped: the next upload asks the hub whether it has them (without sending their bytes) and sends only those it has not. */
  unconfirmed: number;
  /** When the first and the last of them were recorded. */
  first: Date;
  last: Date;
}

export interface UploadResult {
  /** The commit, or null with commit: false. */
  commit: { oid: string; url: string } | null;
  files: UploadedFile[];
}

export interface UploadedFile {
  /** The path in the repository. */
  path: string;
  size: number;
  /** The file hash (what download asks for); null for a small text file the hub took inline. */
  hash: string | null;
  /** Standard hex SHA-256 digest of the file. */
  sha256: string;
  /** Bytes the hub already stored (or that repeat within the upload): not sent. */
  dedupedBytes: number;
  /** Bytes of the file that went into new xorbs. */
  uploadedBytes: number;
  /** The part of dedupedBytes an earlier, interrupted upload had stored. */
  resumedBytes: number;
}

export interface DownloadOptions extends HubOptions {
  /**
   * Bytes [start, end) only. Every chunk is checked against its xorb's footer before it is
   * kept, and the range against the whole file's hash; a whole file is checked the same way.
   */
  range?: { start: number; end: number };
  /** total: the bytes the download will give, once known (a download by path knows it first). */
  onProgress?: (p: { written: number; total?: number }) => void;
  /**
   * "bytes" (default): a Uint8Array; "blob": a Blob; "stream": a ReadableStream, returned at
   * once and filled as it is read (memory stays small; a failure errors the stream).
   */
  as?: "bytes" | "blob" | "stream";
  /**
   * Write the bytes here instead, at the pace it takes them (memory stays small, whatever the
   * file's size), and resolve to their count:
   * - a WritableStream: closed at the end, aborted on failure;
   * - a FileSystemFileHandle (showSaveFilePicker's, or a file of OPFS): written through the
   *   browser's own temporary file, which becomes the file only once all is checked; in OPFS
   *   the bytes go into a partial file beside it (.NAME.<file hash>.incomplete) that a later
   *   download of the same file, after a failure or a reload, resumes from: each chunk there
   *   is checked against its hash before it counts, the rest is fetched;
   * - in Node, a file path: the same partial file beside it, resumed the same way (the
   *   command's `xetkit download -o` resumes it too), renamed to the path once all is checked.
   * A failed download never leaves unchecked bytes at the target. With a range, nothing is
   * resumed.
   */
  to?: WritableStream<Uint8Array> | FileSystemFileHandle | string;
}

export interface OpenOptions extends HubOptions {
  /** The opened file's type (Blob.type; default ""). */
  type?: string;
}

/**
 * A file opened with open(), or a slice of one: what a Blob offers, read lazily. slice
 * fetches nothing; each read fetches only the chunks under it (from the xorb ranges that
 * hold them), checks every one against its xorb's footer and the range against the file
 * hash, and rejects (code "VERIFY") rather than give a wrong byte. Small reads go through
 * a few kept windows of the file (256 KiB each, 4 MiB in all), so a parser reading a
 * header field by field fetches once. The file is the one the path named when opened.
 */
export interface LazyBlob {
  readonly size: number;
  readonly type: string;
  /** The path it was opened at. */
  readonly path: string;
  /** The file hash; null for a small file stored in git (fetched whole when opened). */
  readonly hash: string | null;
  /** Bytes [start, end) of this one (negative: from the end), as Blob.slice; nothing is fetched. */
  slice(start?: number, end?: number, contentType?: string): LazyBlob;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<OutBytes>;
  text(): Promise<string>;
  /** Fetched when first read, handed over in pieces of at most 1 MiB at the reader's pace; cancel stops it. */
  stream(): ReadableStream<OutBytes>;
}

/** One term of a file's reconstruction. */
export interface FileTerm {
  xorb: string;
  start: number;
  end: number;
  bytes: number;
}

/** A file or folder of a repository, as listFiles gives it. */
export interface RepoEntry {
  type: "file" | "directory";
  path: string;
  size: number;
  /** The git object id. */
  oid: string;
  /** The file hash of a file stored with Xet. */
  xetHash?: string;
  /** oid: the file's SHA-256, for a file stored with Xet. */
  lfs?: { oid: string; size: number };
}

export interface ListFilesOptions extends HubOptions {
  /** A folder ("" or absent: the whole repository). */
  path?: string;
  /** Everything below (default true), or one level. */
  recursive?: boolean;
}

export interface MemoryUse {
  /** Bytes of WebAssembly memory of this thread's instance. */
  wasm: number;
  /** Bytes of WebAssembly memory of each worker's instance (the pool's, and the one validateShardAsync may start). */
  workers: number[];
}

export interface Xetkit {
  /** Chunks bytes: [{offset, length, hash}]. */
  chunk(bytes: Bytes): Chunk[];
  createChunker(): Chunker;
  readonly hash: Hashes;
  buildShard(spec: ShardSpec | string): OutBytes;
  /**
   * Parses a shard; with upload, findings also cover what the upload API
   * requires; with validate: false the validator is skipped (findings: []).
   */
  parseShard(bytes: Bytes, options?: { upload?: boolean; validate?: boolean; packedChunks?: false }): ParsedShard;
  /**
   * With packedChunks: every xorb's chunks is [] and the rows of all of
   * them come as columns in chunkRows (far faster for a big shard), which,
   * like each file's entries and verification and the chunk lookup table,
   * the module reads from bytes when first used (numEntries, numChunks and
   * unpackedBytes are there from the start); with validate: false no such
   * record is read at all before then. Leave bytes unchanged while the
   * result is in use.
   */
  parseShard(bytes: Bytes, options: { upload?: boolean; validate?: boolean; packedChunks: true }): ParsedShard & { chunkRows: PackedChunkRows };
  /** The findings parseShard would include, alone. */
  validateShard(bytes: Bytes, options?: { upload?: boolean }): ShardFinding[];
  /** validateShard on a worker, off this thread: the pool's, or, where the default pool is empty (2 cores), one started for such calls; with workers: 0, on this thread. */
  validateShardAsync(bytes: Bytes, options?: { upload?: boolean }): Promise<ShardFinding[]>;
  /** Parses a xorb, or whole chunk records without a footer; decompresses and hashes every chunk unless verify is false. */
  parseXorb(bytes: Bytes, options?: { verify?: boolean }): ParsedXorb;
  /**
   * The field spans of one part of a shard (a file block: its fields and one span per
   * record, at most 400; a term: its fields and its verification entry's). Reads only
   * the records it needs.
   */
  shardFields(bytes: Bytes, selection: ShardSelection): FieldSpan[];
  /** The field spans of the xorb chunk record whose header is at offset: its header fields, then the payload. */
  xorbFields(bytes: Bytes, offset: number): FieldSpan[];
  /** The flags of a shard "file" block, "chunk" entry or other record as hex, naming the defined bits ("0x80000000 dedupe"). */
  shardFlags(record: string, flags: number): string;
  /** Which entry of the shard file or CAS block at blockOffset holds byte offset (terms, then verification entries and metadata ext): -1 for the block's header. */
  shardEntryAt(blockOffset: number, offset: number): number;
  /** What bytes may be, by their start and size: "shard" (begins like one, damaged or not), "xorb" (small enough: try parseXorb) or "file". */
  kindOf(bytes: Bytes): "shard" | "xorb" | "file";
  /** The XET strings of the 32-byte raw hashes in bytes (e.g. PackedChunkRows.hashes). */
  hashStrings(bytes: Bytes): string[];
  /** chunk, with the hashing spread over the worker pool (if the instance has one); results are identical. */
  chunkAsync(input: Bytes | Blob, options?: { signal?: AbortSignal }): Promise<Chunk[]>;
  /**
   * The upload pipeline on one file with no hub: the xorbs (to onXorb) and the shard are byte
   * for byte what upload() with the same options sends to a hub that has none of the file.
   */
  processFile(input: Bytes | Blob, options?: ProcessOptions): Promise<ProcessedFile>;
  /**
   * Uploads files into a repository and commits them at their paths: chunks, dedupe (within
   * the upload and against the hub), xorbs and the shard, with retries, then one commit. Chunk
   * hashing, compression and the SHA-256 run on the worker pool (if the instance has one); in
   * Node the SHA-256 runs in Node's crypto.
   */
  upload(files: readonly UploadInput[], options: UploadOptions): Promise<UploadResult>;
  /**
   * Downloads a file by its path on the revision, or by its file hash; every byte is checked
   * before it is given.
   */
  download(target: { path: string } | string, options: DownloadOptions & { as: "blob" }): Promise<Blob>;
  download(target: { path: string } | string, options: DownloadOptions & { as: "stream" }): Promise<ReadableStream<Uint8Array>>;
  download(target: { path: string } | string, options: DownloadOptions & { to: WritableStream<Uint8Array> | FileSystemFileHandle | string }): Promise<number>;
  download(target: { path: string } | string, options: DownloadOptions): Promise<OutBytes>;
  /**
   * Opens a file by its path on the revision, lazily: one request to resolve it, then each
   * read of the LazyBlob fetches, checked, only the chunks under it.
   */
  open(target: { path: string }, options: OpenOptions): Promise<LazyBlob>;
  /**
   * The unfinished uploads the upload state holds (see UploadOptions.resume), one per hub and
   * repository, the latest first: an upload of the same files to that repository sends only
   * what they do not cover. options.resume names the store as upload takes it (default: the
   * platform's); false or a platform without one: [].
   */
  pendingUploads(options?: { resume?: boolean | ResumeStore }): Promise<PendingUpload[]>;
  /** How the hub rebuilds a file: its terms, each chunks [start, end) of one xorb, as the hub gives them. */
  fileTerms(fileHash: string, options: HubOptions): Promise<FileTerm[]>;
  /** Lists a repository's files and folders. */
  listFiles(options: ListFilesOptions): Promise<RepoEntry[]>;
  memory(): Promise<MemoryUse>;
  /** The worker pool's size (0: everything runs on this thread). */
  readonly workers: number;
  /**
   * Whether BLAKE3 and SHA-256 run in the SIMD WebAssembly kernels (false
   * when load was given `kernels: false` or the engine lacks SIMD).
   */
  readonly kernels: boolean;
  /** Stops the worker pool; the synchronous functions keep working. */
  close(): void;
}

export interface LoadOptions {
  /**
   * Where xetkit.wasm is (default: beside xetkit.js, which bundlers that
   * follow `new URL("./xetkit.wasm", import.meta.url)` emit for you). A
   * relative URL is resolved against the page, as fetch does. The package
   * exports the file as "xetkit/xetkit.wasm" (e.g. Vite's
   * `import wasmURL from "xetkit/xetkit.wasm?url"`).
   */
  wasmURL?: string | URL;
  /** An already compiled xetkit.wasm, instead of wasmURL. */
  wasmModule?: WebAssembly.Module;
  /** Worker pool size (default: the cores, navigator.hardwareConcurrency or os.availableParallelism(), less two, so that with one core busy elsewhere every thread keeps a core; none on 2 cores); 0: no pool. */
  workers?: number;
  /**
   * Use the SIMD WebAssembly kernels for BLAKE3 and SHA-256 where the engine
   * supports them (default true). false runs the portable Go code: the same
   * results, slower.
   */
  kernels?: boolean;
}

/**
 * Loads the module; calls with the same options share one instance. Rejects
 * with XetkitError code "LOAD" when the wasm cannot be fetched, read or
 * compiled.
 */
export function load(options?: LoadOptions): Promise<Xetkit>;
