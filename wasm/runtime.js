// Running the Go runtime, shared by xetkit.js and its pool workers. The
// pool writes the source of its workers from these functions
// (Function.prototype.toString, so it survives any bundler), which is why
// they are self-contained: they use nothing but their arguments and the
// platform's standard globals.

/**
 * startGo runs one instance of a compiled xetkit.wasm and resolves to
 * {api, memory, go, kernels, nextTask}: the functions main() exported, the
 * instance's memory, the Go object, whether the kernels run, and a turn
 * of the event loop. defineGo is go-runtime.js's; tune(go), if given, may
 * adjust go.importObject before the instance starts. kernels, the compiled
 * kernels.wasm or null, is instantiated on the instance's memory and
 * supplies Go's "xetkit_kernels" imports; without it Go is told they are
 * not there and runs its portable code. sha, if given, is the host's
 * SHA-256 (see Host).
 *
 * wasm_exec.js and Go's js.Global() see a globalThis of this instance's own:
 * reads fall through to the real one, writes (wasm_exec's fs, process, path
 * and Go, and the start callback) stay on it. Nothing leaks onto the page.
 */
export async function startGo(module, defineGo, tune, kernels, sha) {
  const own = Object.create(null);
  const scope = new Proxy(Object.create(null), {
    get: (_, key) => (key in own ? own[key] : globalThis[key]),
    set: (_, key, value) => {
      own[key] = value;
      return true;
    },
    has: (_, key) => key in own || key in globalThis,
    deleteProperty: (_, key) => delete own[key],
  });
  const Go = defineGo(scope);
  const go = new Go();
  /**
   * Host is what Go takes at start (the Host interface of exports.json):
   * blobOf(ptr, len), a Blob of the instance's bytes [ptr, ptr+len) (an
   * upload body with no copy), and the host's own SHA-256 where sha (a
   * factory of Node crypto hashes) is given, fed straight out of the
   * instance's memory; else null.
   */
  class Host {
    blobOf = (ptr, len) => new Blob([new Uint8Array(memory.buffer, ptr, len)]);
    shaBegin = sha ? () => sha() : null;
    shaUpdate = sha ? (h, ptr, len) => { h.update(new Uint8Array(memory.buffer, ptr, len)); } : null;
    shaEnd = sha ? (h) => h.digest("hex") : null;
  }
  let api = null;
  let memory = null;
  own.xetkitReady = (a) => {
    api = a;
    return new Host();
  };
  // Go reads a Blob through a BYOB reader (jsx.Reader): this fills want
  // bytes of buffer in as many reads as the stream takes (each gives what
  // it has at hand), so Go awaits one promise per buffer, not per piece.
  own.xetkitFillView = (reader, buffer, want) => {
    let got = 0;
    const more = (r) => {
      if (r.value) buffer = r.value.buffer; // each read hands the buffer back
      if (!r.done) got += r.value.length;
      if (r.done || got >= want) return got === 0 ? null : new Uint8Array(buffer, 0, got);
      return reader.read(new Uint8Array(buffer, got, want - got)).then(more);
    };
    return reader.read(new Uint8Array(buffer, 0, want)).then(more);
  };
  // Go reads Blobs of unknown size (jsx.Reader) through their streams'
  // default readers: this reads the start of each of blobs side by side,
  // what its stream gives until it ends or passes limit bytes, and
  // resolves to one record of the batch, so that a folder of small files
  // costs Go one promise and a few crossings a batch, not several a file:
  // {bytes, meta, errors}: the starts back to back; per blob 37 bytes of
  // meta (its start's length, u32 little-endian; flags, 1: it ended
  // there, 2: its SHA-256 follows; the SHA-256 of the whole blob, or
  // zeros); and null, or an array holding each blob's error message or
  // null. The SHA-256 of a
  // blob read whole comes from the platform's WebCrypto, which runs on a
  // thread of its own (SHA instructions too, where the processor has
  // them); none where there is no WebCrypto (a page not served over https
  // nor from localhost).
  const subtle = globalThis.crypto?.subtle;
  const readHead = (blob, limit) => {
    const reader = blob.stream().getReader();
    const parts = [];
    let got = 0;
    const more = (r) => {
      if (!r.done) {
        parts.push(r.value);
        got += r.value.length;
      }
      if (r.done || got > limit) {
        if (!r.done) reader.cancel();
        let bytes = parts.length === 1 ? parts[0] : new Uint8Array(got);
        if (parts.length !== 1) {
          let at = 0;
          for (const p of parts) { bytes.set(p, at); at += p.length; }
        }
        if (!r.done || !subtle) return { bytes, done: r.done, sha: null };
        return subtle.digest("SHA-256", bytes).then((sha) => ({ bytes, done: true, sha }), () => ({ bytes, done: true, sha: null }));
      }
      return reader.read().then(more);
    };
    return reader.read().then(more);
  };
  own.xetkitReadHeads = (blobs, limit) => Promise.all(blobs.map((blob) => readHead(blob, limit).then(
    (h) => h, (e) => ({ bytes: null, error: String(e && e.message ? e.message : e) }),
  ))).then((heads) => {
    let total = 0;
    for (const h of heads) if (h.bytes) total += h.bytes.length;
    const bytes = new Uint8Array(total);
    const meta = new Uint8Array(37 * heads.length);
    const lens = new DataView(meta.buffer);
    let errors = null;
    let at = 0;
    heads.forEach((h, i) => {
      if (h.error !== undefined) {
        (errors ??= heads.map(() => null))[i] = h.error;
        return;
      }
      bytes.set(h.bytes, at);
      at += h.bytes.length;
      lens.setUint32(37 * i, h.bytes.length, true);
      meta[37 * i + 4] = (h.done ? 1 : 0) | (h.sha ? 2 : 0);
      if (h.sha) meta.set(new Uint8Array(h.sha), 37 * i + 5);
    });
    return { bytes, meta, errors };
  });
  // A turn of the event loop (a page repaints, workers' replies come in),
  // which Go (jsx.Reader) and xetkit.js take between pieces of work on
  // bytes already at hand. A MessageChannel, not setTimeout: a browser
  // delays nested timers by 4 ms.
  const nextTask = () => new Promise((resolve) => {
    if (typeof setImmediate === "function") return setImmediate(resolve);
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
  own.xetkitNextTask = nextTask;
  // A response's headers as one string for Go (cas.FetchTransport), a
  // "name: value\n" line each (Headers gives names in lower case, values
  // without line breaks): one crossing, not several a header.
  own.xetkitHeaderLines = (headers) => {
    let s = "";
    for (const [k, v] of headers) s += k + ": " + v + "\n";
    return s;
  };
  go.argv = ["xetkit", "xetkitReady"];
  if (tune) tune(go);
  // The kernels need the instance's memory, which exists only once the
  // instance does: Go's imports call through k, filled in before Go runs.
  let k = null;
  go.importObject.xetkit_kernels = {
    available: () => (k ? 1 : 0),
    blake3_x4: (key, inp, stride, nblocks, counter, step, flags, start, end, out, groups) =>
      k.blake3_x4(key, inp, stride, nblocks, counter, step, flags, start, end, out, groups),
    blake3_roots_x4: (key, flags, inp, stride, lens, out, groups) => k.blake3_roots_x4(key, flags, inp, stride, lens, out, groups),
    sha256_blocks: (state, inp, n, scratch) => k.sha256_blocks(state, inp, n, scratch),
  };
  const instance = await WebAssembly.instantiate(module, go.importObject);
  memory = instance.exports.mem;
  if (kernels) k = new WebAssembly.Instance(kernels, { env: { memory: instance.exports.mem } }).exports;
  go.run(instance); // runs main until it blocks, which is after it called back
  delete own.xetkitReady;
  if (!api) throw new Error("xetkit.wasm did not start");
  return { api, memory: instance.exports.mem, go, kernels: k !== null, nextTask };
}
