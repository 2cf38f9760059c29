// A worker of xetkit's pool (a Web Worker in browsers, a worker_threads
// worker in Node). The pool writes each worker's source from serveJobs,
// startGo and defineGo (no worker file is fetched, so the pool works from
// any origin and through any bundler); serveJobs is therefore
// self-contained, like runtime.js.
//
// The worker runs its own instance of xetkit.wasm, compiled once by the
// page and sent in the first message, and answers jobs {id, op, args} (op:
// a sync export of exports.json) with {id, result} or {id, error}. Results that are byte arrays are transferred,
// not copied.

/**
 * serveJobs answers the pool's messages on port ({post(msg, transfer),
 * listen(fn)}).
 */
export function serveJobs(port, startGo, defineGo) {
  let go = null; // {api, memory}

  // Transferable arrays in a result (or the fields of one), so
  // postMessage moves them.
  const transfers = (result) => {
    const out = [];
    const add = (v) => {
      if (ArrayBuffer.isView(v) && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) out.push(v.buffer);
    };
    if (result !== null && typeof result === "object" && !ArrayBuffer.isView(result)) Object.values(result).forEach(add);
    else add(result);
    return out;
  };

  port.listen(async (msg) => {
    if (msg.init) {
      try {
        go = await startGo(msg.init, defineGo, undefined, msg.kernels);
        port.post({ ready: true }, []);
      } catch (e) {
        port.post({ error: { message: String(e && e.message ? e.message : e), code: "INTERNAL" } }, []);
      }
      return;
    }
    const { id, op, args } = msg;
    if (op === "memory") {
      port.post({ id, result: go.memory.buffer.byteLength }, []);
      return;
    }
    let r;
    try {
      const fn = go.api[op];
      if (typeof fn !== "function") throw new Error(`unknown operation ${op}`);
      r = fn(...args);
    } catch (e) {
      port.post({ id, error: { message: `${op}: ${e && e.message ? e.message : e}`, code: "INTERNAL" } }, []);
      return;
    }
    if (!r.ok) {
      port.post({ id, error: r.error }, []);
      return;
    }
    const reply = { id, result: r.value };
    const t = transfers(r.value);
    // The job's byte array (its first argument that is one) goes back to
    // be filled again.
    const input = msg.recycle ? args.find((a) => a instanceof Uint8Array) : undefined;
    if (input && input.buffer.byteLength > 0) {
      reply.recycled = input.buffer;
      t.push(input.buffer);
    }
    port.post(reply, t);
  });
}
