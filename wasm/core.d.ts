// Types of xetkit/core: the formats alone (chunking, hashes, shards,
// xorbs), as the full module has them, from a module of its own.

import type { LoadOptions, Xetkit } from "./xetkit.js";

export type {
  Bytes, Chunk, Chunker, FieldSpan, Hashes, OutBytes, ParsedShard, ParsedXorb, PackedChunkRows,
  ShardFinding, ShardSelection, ShardSpec, XetkitErrorCode,
} from "./xetkit.js";
export { XetkitError } from "./xetkit.js";

/** What xetkit/core's load gives: the full module's formats, nothing else. */
export type XetkitCore = Pick<Xetkit,
  | "chunk" | "createChunker" | "hash" | "buildShard" | "parseShard" | "validateShard" | "validateShardAsync"
  | "parseXorb" | "shardFields" | "xorbFields" | "shardFlags" | "shardEntryAt" | "kindOf" | "hashStrings"
  | "kernels" | "workers" | "memory" | "close">;

/**
 * Loads xetkit-core.wasm (beside this module unless options say where).
 * workers: 0 keeps validateShardAsync on the calling thread; otherwise it
 * runs on one worker of its own. Repeated calls share one instance.
 */
export function load(options?: LoadOptions): Promise<XetkitCore>;
