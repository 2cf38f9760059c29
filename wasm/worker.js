// A worker of xetkit's pool (a Web Worker in browsers, a worker_threads
// worker in Node). It runs its own instance of xetkit.wasm, compiled once by
// the page and sent here, and answers jobs {id, op, args} with
// {id, result} or {id, error}. Results that are byte arrays are transferred,
// not copied.

const isNode =
  typeof process !== "undefined" && process.versions != null && process.versions.node != null &&
  typeof self === "undefined";

let port;
if (isNode) {
  const { parentPort } = await import("node:worker_threads");
  port = {
    post: (m, t) => parentPort.postMessage(m, t),
    listen: (fn) => parentPort.on("message", fn),
  };
} else {
  port = {
    post: (m, t) => self.postMessage(m, t),
    listen: (fn) => { self.onmessage = (e) => fn(e.data); },
  };
}

let go = null; // {api, memory}

async function start(module) {
  await import(new URL("./wasm_exec.js", import.meta.url).href);
  const runtime = new globalThis.Go();
  const name = `__xetkitWorkerReady_${Math.random().toString(36).slice(2)}`;
  let api = null;
  globalThis[name] = (a) => { api = a; };
  runtime.argv = ["xetkit", name];
  const instance = await WebAssembly.instantiate(module, runtime.importObject);
  runtime.run(instance);
  delete globalThis[name];
  if (!api) throw new Error("xetkit.wasm did not start");
  return { api, memory: instance.exports.mem };
}

// Transferable byte arrays in a result, so postMessage moves them.
function transfers(result) {
  const out = [];
  const add = (v) => {
    if (v instanceof Uint8Array && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) out.push(v.buffer);
  };
  if (Array.isArray(result)) result.forEach(add);
  else add(result);
  return out;
}

port.listen(async (msg) => {
  if (msg.init) {
    try {
      go = await start(msg.init);
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
  if (r !== null && typeof r === "object" && r.xetkitError === true) {
    port.post({ id, error: { message: r.message, code: r.code, offset: r.offset } }, []);
    return;
  }
  const reply = { id, result: r };
  const t = transfers(r);
  // The job's input buffer goes back to be filled again.
  if (msg.recycle && args[0] instanceof Uint8Array && args[0].buffer.byteLength > 0) {
    reply.recycled = args[0].buffer;
    t.push(args[0].buffer);
  }
  port.post(reply, t);
});
