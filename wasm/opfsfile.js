// Downloads into a file of the Origin Private File System, resumable: the
// bytes go into a partial file beside the target (.NAME.<file hash 16>.incomplete),
// written through a FileSystemSyncAccessHandle on a worker (writes land in
// the file at once, so a reload keeps them, and no copy of the file is
// made, as createWritable's would be), and the partial file replaces the
// target only once the download is whole and checked. Go decides what is
// kept (cas.Client.DownloadInto); this file only reads and writes.

const PARTIAL = ".incomplete";

/** Where handle is in OPFS: its folder's handle and its name; null if it is not there. */
export async function opfsPlace(handle) {
  const root = await navigator.storage?.getDirectory?.();
  const path = root ? await root.resolve(handle) : null;
  if (!path) return null;
  let dir = root;
  for (const p of path.slice(0, -1)) dir = await dir.getDirectoryHandle(p);
  return { dir, name: path.at(-1) };
}

/**
 * The partial file of a download into the OPFS file at place (opfsPlace):
 * open(hash, size) → {size, readAt, writeAt, truncate} (Go's events.open),
 * done() moves it over the target, fail() closes it and keeps it for the
 * next try (a file stored in git, with no hash, is not kept).
 */
export function opfsPartial({ dir, name }) {
  let part = null; // {id, name, keep}
  const worker = fileWorker();
  return {
    async open(hash, size) {
      const keep = hash !== "";
      const partName = keep ? `.${name}.${hash.slice(0, 16)}${PARTIAL}` : `.${name}.${Math.random().toString(36).slice(2, 10)}.part`;
      const handle = await dir.getFileHandle(partName, { create: true });
      const w = await worker;
      const { id, size: have } = await w.call({ op: "open", handle });
      part = { id, name: partName, handle, keep };
      // One buffer goes to the worker and back for every read: Go takes a
      // read's bytes before it asks for the next (its calls on a file are
      // one at a time), and a new buffer a read would pile up garbage
      // faster than the page collects it (a resumed 2 GiB download reads
      // back 1 GiB).
      let spare = null;
      return {
        size: keep ? Math.min(have, size) : 0,
        readAt: async (off, n) => {
          const buf = spare?.byteLength >= n ? spare : new ArrayBuffer(n);
          spare = null;
          const r = await w.call({ op: "read", id, off, n, buf }, [buf]);
          spare = r.buf;
          return new Uint8Array(r.buf, 0, r.got);
        },
        // The worker hands the buffer back once written, for Go to fill
        // again (jsasync.File): a buffer a write would pile up in the
        // worker until its collector ran.
        writeAt: (off, bytes) => w.call({ op: "write", id, off, bytes }, [bytes.buffer]).then((r) => r.buf),
        truncate: (n) => w.call({ op: "truncate", id, n }),
      };
    },
    async done() {
      if (!part) return;
      await (await worker).call({ op: "close", id: part.id });
      // move does not replace a file that is there.
      await dir.removeEntry(name).catch((e) => { if (e?.name !== "NotFoundError") throw e; });
      await part.handle.move(dir, name);
      part = null;
    },
    async fail() {
      if (!part) return;
      await (await worker).call({ op: "close", id: part.id }).catch(() => {});
      if (!part.keep) await dir.removeEntry(part.name).catch(() => {});
      part = null;
    },
  };
}

// The page's download worker: resolves to {call(msg, transfer) → a
// promise of its answer}; made once, from its source text.
let started = null;
function fileWorker() {
  started ??= new Promise((resolve, reject) => {
    let w;
    try {
      w = new Worker(URL.createObjectURL(new Blob([`(${fileWorkerMain})()`], { type: "text/javascript" })), { name: "xetkit-downloads" });
    } catch (e) {
      started = null;
      return reject(new Error(`downloading into OPFS needs a worker: ${e.message ?? e}`));
    }
    const calls = new Map();
    let next = 0;
    w.onmessage = ({ data: m }) => {
      const c = calls.get(m.id);
      calls.delete(m.id);
      if (m.error) c?.rej(Object.assign(new Error(m.error.message), { name: m.error.name }));
      else c?.res(m.value);
    };
    w.onerror = (e) => {
      e.preventDefault?.();
      for (const c of calls.values()) c.rej(new Error(`the download worker failed: ${e.message ?? e}`));
      calls.clear();
      started = null;
    };
    resolve({
      call: (msg, transfer = []) => new Promise((res, rej) => {
        const id = next++;
        calls.set(id, { res, rej });
        w.postMessage({ ...msg, callId: id }, transfer);
      }),
    });
  });
  return started;
}

// fileWorkerMain is the download worker's whole source: it keeps the
// access handles of the files being written and serves open, read,
// write, truncate and close, one call at a time.
function fileWorkerMain() {
  const files = new Map();
  let nextFile = 0;
  const ops = {
    async open({ handle }) {
      const access = await handle.createSyncAccessHandle();
      const id = nextFile++;
      files.set(id, access);
      return { id, size: access.getSize() };
    },
    read({ id, off, n, buf }) {
      const a = files.get(id);
      const got = a.read(new Uint8Array(buf, 0, Math.max(0, Math.min(n, a.getSize() - off))), { at: off });
      return { buf, got };
    },
    write({ id, off, bytes }) {
      const a = files.get(id);
      let done = 0;
      while (done < bytes.length) done += a.write(bytes.subarray(done), { at: off + done });
      return { buf: bytes.buffer };
    },
    truncate({ id, n }) { files.get(id).truncate(n); },
    close({ id }) {
      const a = files.get(id);
      files.delete(id);
      if (a) { a.flush(); a.close(); }
    },
  };
  let queue = Promise.resolve();
  self.onmessage = ({ data: m }) => {
    queue = queue.then(async () => {
      try {
        const value = await ops[m.op](m);
        self.postMessage({ id: m.callId, value }, value?.buf ? [value.buf] : []);
      } catch (e) {
        self.postMessage({ id: m.callId, error: { name: e?.name ?? "Error", message: `${m.op}: ${e?.message ?? e}` } });
      }
    });
  };
}
