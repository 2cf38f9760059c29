// Where a browser keeps an upload's state (the ResumeStore of
// xetkit.d.ts): the Origin Private File System, else IndexedDB. What goes
// in the records, and when, is Go's (resume/); a store only keeps them,
// each whole or not at all.

const FOLDER = "xetkit-uploads";
// How old a temporary file must be before list deletes it: a younger one
// may be a write under way in another tab.
const STALE_MS = 60 * 60 * 1000; // without Web Locks
const PART = ".part";
const MOVE_ATTEMPTS = 8;
// The record worker's calls are numbered below MAX_ID; where memory can be
// shared, call id is marked done by id + 1 in slot id % MARKS of a ring.
const MAX_ID = 1 << 30;
const MARKS = 1024;

const missing = (e) => e?.name === "NotFoundError";

// This page's temporary files carry its session, held as a Web Lock while
// the page lives: list deletes those of sessions no page holds any more
// (a reload, a crash) at once, and, without Web Locks, once stale.
const session = Math.random().toString(36).slice(2, 10);
const LOCK = "xetkit-uploads-";
let locked = false;
function holdSession() {
  if (locked || typeof navigator === "undefined" || !navigator.locks) return;
  locked = true;
  navigator.locks.request(LOCK + session, () => new Promise(() => {})).catch(() => {});
}
async function liveSessions() {
  if (typeof navigator === "undefined" || !navigator.locks) return null;
  const { held = [], pending = [] } = await navigator.locks.query();
  return new Set([...held, ...pending].map((l) => l.name).filter((n) => n?.startsWith(LOCK)).map((n) => n.slice(LOCK.length)));
}

/**
 * The upload state's store in this browser: the Origin Private File System
 * where it can write files (createWritable), else IndexedDB, else null
 * (no state kept).
 */
export function browserResumeStore() {
  if (typeof navigator !== "undefined" && typeof navigator.storage?.getDirectory === "function"
    && typeof FileSystemFileHandle !== "undefined" && typeof FileSystemFileHandle.prototype.createWritable === "function") {
    return opfsStore();
  }
  if (typeof indexedDB !== "undefined") return indexedDBStore();
  return null;
}

/**
 * Records in the Origin Private File System: xetkit-uploads/<scope>/<name>.
 * A record is written to a temporary file beside it and moved to its name
 * once closed, so a reload or a crash mid-write leaves no file under a
 * record's name (where move() is missing, the record is written in place:
 * the file system keeps a writable's bytes apart until close()).
 *
 * Writes and removes go to a worker where the browser lets one write
 * (createSyncAccessHandle, which only workers have): the page's thread,
 * busy building xorbs, turns its event loop only now and then, and each
 * step of a write from the page waits for a turn, while the xorb the
 * record names waits to be sent until it is durable. A write is posted to
 * the worker in the call itself, not after a turn, and the worker is idle:
 * the record is durable within a millisecond or two whatever the page is
 * doing. The worker's answer would reach Go only at the next turn (100-250
 * ms apart on a busy page); where the page is cross-origin isolated, the
 * call's promise carries done(), which Go asks without waiting for a turn
 * (ResumeStore in xetkit.d.ts).
 */
export function opfsStore() {
  const base = async (create) => (await navigator.storage.getDirectory()).getDirectoryHandle(FOLDER, { create });
  // The scopes' folders, kept: each step of a write waits for the page's
  // event loop, which a busy upload turns only now and then, and a record
  // should be durable as soon after the hub's answer as it can be.
  const folders = new Map();
  // inFolder runs fn on the scope's folder; a folder removed since it was
  // kept, or removed while fn ran (a remove of its last record, here or
  // in another tab), is looked up (with create, made) again, once.
  const inFolder = async (scope, create, fn) => {
    for (let attempt = 0; ; attempt++) {
      const kept = folders.get(scope);
      try {
        const f = kept ?? await (await base(create)).getDirectoryHandle(scope, { create });
        folders.set(scope, f);
        return await fn(f);
      } catch (e) {
        folders.delete(scope);
        if (attempt > 0 || !missing(e)) throw e;
      }
    }
  };
  const onPage = {
    // A remove of the scope's last record may take its folder away while
    // this writes: then the folder is made again.
    write: (scope, name, bytes) => inFolder(scope, true, (dir) => writeWhole(dir, name, bytes)),
    // Where move() is missing this fails, and the record is written again.
    rename: (scope, name, to) => inFolder(scope, false, async (dir) => (await dir.getFileHandle(name)).move(to)),
    async remove(scope, name) {
      try {
        await inFolder(scope, false, (dir) => dir.removeEntry(name));
      } catch (e) {
        if (!missing(e)) throw e;
      }
      try {
        await (await base(false)).removeEntry(scope);
        folders.delete(scope);
      } catch { /* not empty */ }
    },
  };
  const worker = recordWorker();
  // through sends a write, rename or remove to the worker once it is up
  // (at once when it is), else does it on the page. arg is a write's
  // bytes, a rename's new name.
  const through = (op) => (scope, name, arg) => {
    holdSession();
    const msg = { op, scope, name, session, ...(op === "write" ? { bytes: arg.slice() } : { to: arg }) };
    const post = (w) => w ? w.call(msg) : onPage[op](scope, name, arg);
    return worker.ready ? post(worker.ready) : worker.up.then(post);
  };
  return {
    async list() {
      let root;
      try { root = await base(false); } catch (e) { if (missing(e)) return []; throw e; }
      const out = [];
      const live = await liveSessions();
      for await (const [scope, dir] of root.entries()) {
        if (dir.kind !== "directory") continue;
        for await (const [name, h] of dir.entries()) {
          if (h.kind !== "file") continue;
          try {
            const f = await h.getFile();
            if (!name.endsWith(PART)) out.push({ scope, name, size: f.size });
            else if (live ? !live.has(name.split(".").at(-3)) : Date.now() - f.lastModified > STALE_MS) await dir.removeEntry(name);
          } catch { /* removed meanwhile */ }
        }
      }
      return out;
    },
    async read(scope, name) {
      try {
        return await inFolder(scope, false, async (dir) => new Uint8Array(await (await (await dir.getFileHandle(name)).getFile()).arrayBuffer()));
      } catch (e) {
        if (missing(e)) return null;
        throw e;
      }
    },
    write: through("write"),
    rename: through("rename"),
    remove: through("remove"),
  };
}

// The record worker, one for the page: up resolves to it (with call(msg)
// → a promise of the worker's answer), or to null where the browser has
// no such worker; ready is it once up.
let records = null;
function recordWorker() {
  if (records) return records;
  records = { ready: null };
  records.up = new Promise((resolve) => {
    let w;
    try {
      w = new Worker(URL.createObjectURL(new Blob([`(${recordWorkerMain})()`], { type: "text/javascript" })), { name: "xetkit-records" });
    } catch {
      return resolve(null);
    }
    const calls = new Map();
    let next = 0;
    // Where the page is cross-origin isolated, the worker also marks each
    // call it has done in memory shared with the page, and the call's
    // promise carries done(), which reads that mark: a busy page hears of
    // the record at once, not when its event loop next turns.
    const marks = typeof SharedArrayBuffer === "function" && globalThis.crossOriginIsolated
      ? new Int32Array(new SharedArrayBuffer(4 * MARKS)) : null;
    if (marks) w.postMessage({ marks });
    const call = (msg) => {
      const id = next;
      next = (next + 1) % MAX_ID;
      let answered = false;
      const p = new Promise((res, rej) => {
        calls.set(id, { res: () => { answered = true; res(); }, rej });
        w.postMessage({ ...msg, id }, msg.bytes ? [msg.bytes.buffer] : []);
      });
      // The slot is the mark of call id until call id + MARKS is done,
      // long after this call's answer came.
      if (marks) p.done = () => answered || Atomics.load(marks, id % MARKS) === id + 1;
      return p;
    };
    w.onmessage = ({ data: m }) => {
      if ("able" in m) {
        if (!m.able) w.terminate();
        records.ready = m.able ? { call } : null;
        return resolve(records.ready);
      }
      const c = calls.get(m.id);
      calls.delete(m.id);
      if (m.error) c?.rej(Object.assign(new Error(m.error.message), { name: m.error.name }));
      else c?.res();
    };
    // A worker that cannot start (a policy forbids blob: workers) or
    // dies leaves the writes to the page; those it was given fail.
    w.onerror = (e) => {
      e.preventDefault?.();
      records.ready = null;
      records.up = Promise.resolve(null);
      for (const c of calls.values()) c.rej(new Error(`the upload state's worker failed: ${e.message ?? e}`));
      calls.clear();
      resolve(null);
    };
  });
  return records;
}

// recordWorkerMain is the record worker's whole source (it runs alone, by
// its text): it says whether it can write, then writes and removes
// records as the page asks, one at a time, each whole or not at all.
function recordWorkerMain() {
  const FOLDER = "xetkit-uploads";
  const able = typeof FileSystemSyncAccessHandle !== "undefined" && typeof FileSystemFileHandle?.prototype.move === "function"
    && typeof navigator.storage?.getDirectory === "function";
  const missing = (e) => e?.name === "NotFoundError";
  const folders = new Map();
  const folder = async (scope, create) => {
    let f = folders.get(scope);
    if (!f) {
      f = await (await (await navigator.storage.getDirectory()).getDirectoryHandle(FOLDER, { create })).getDirectoryHandle(scope, { create });
      folders.set(scope, f);
    }
    return f;
  };
  const write = async (dir, m) => {
    const tmp = await dir.getFileHandle(`${m.name}.${m.session}.${Math.random().toString(36).slice(2, 10)}.part`, { create: true });
    try {
      const a = await tmp.createSyncAccessHandle();
      try {
        a.truncate(0);
        if (a.write(m.bytes, { at: 0 }) !== m.bytes.byteLength) throw new Error("short write");
        a.flush();
      } finally {
        a.close();
      }
      await tmp.move(m.name);
    } catch (e) {
      await dir.removeEntry(tmp.name).catch(() => {});
      throw e;
    }
  };
  // queued counts the calls of each scope not yet done.
  const queued = new Map();
  const remove = async (dir, m) => {
    await dir.removeEntry(m.name).catch((e) => { if (!missing(e)) throw e; });
    // The folder goes with the last of a burst of removes (an upload's
    // records go together once it is committed); trying after each one
    // cost a file system call of 1-2 ms each.
    if (queued.get(m.scope) > 1) return;
    try {
      await (await (await navigator.storage.getDirectory()).getDirectoryHandle(FOLDER)).removeEntry(m.scope);
      folders.delete(m.scope);
    } catch { /* not empty */ }
  };
  // A confirmed record: one call, against a write and a remove.
  const rename = async (dir, m) => (await dir.getFileHandle(m.name)).move(m.to);
  const ops = { write, rename, remove };
  // One at a time: a remove of a scope's last record takes its folder
  // away, which a write beside it must not race. A folder gone since it
  // was kept (another tab removed it) is looked up again, once.
  let queue = Promise.resolve();
  const run = async (m) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await ops[m.op](await folder(m.scope, m.op === "write"), m);
      } catch (e) {
        folders.delete(m.scope);
        if (!missing(e) || (attempt > 0 && m.op !== "remove")) throw e;
        if (attempt > 0) return; // no folder: nothing to remove
      }
    }
  };
  let marks = null; // the page's ring of done marks, if it shares one
  self.onmessage = ({ data: m }) => {
    if (m.marks) {
      marks = m.marks;
      return;
    }
    queued.set(m.scope, (queued.get(m.scope) ?? 0) + 1);
    queue = queue.then(() => run(m)).finally(() => {
      if (queued.get(m.scope) === 1) queued.delete(m.scope);
      else queued.set(m.scope, queued.get(m.scope) - 1);
    }).then(
      () => {
        if (marks) Atomics.store(marks, m.id % marks.length, m.id + 1);
        self.postMessage({ id: m.id });
      },
      (e) => self.postMessage({ id: m.id, error: { name: e?.name ?? "Error", message: String(e?.message ?? e) } }));
  };
  self.postMessage({ able });
}

async function writeWhole(dir, name, bytes) {
  holdSession();
  const probe = await dir.getFileHandle(`${name}.${session}.${Math.random().toString(36).slice(2, 10)}${PART}`, { create: true });
  if (typeof probe.move !== "function") {
    await dir.removeEntry(probe.name);
    const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
    await w.write(bytes);
    await w.close();
    return;
  }
  try {
    const w = await probe.createWritable();
    await w.write(bytes);
    await w.close();
    // Chromium may still hold the closed writable's lock for a moment
    // ("cannot be moved while it is locked"): try again shortly.
    for (let attempt = 1; ; attempt++) {
      try {
        await probe.move(name);
        break;
      } catch (e) {
        if (e?.name !== "NoModificationAllowedError" || attempt === MOVE_ATTEMPTS) throw e;
        await new Promise((r) => setTimeout(r, 10 * attempt));
      }
    }
  } catch (e) {
    await dir.removeEntry(probe.name).catch(() => {});
    throw e;
  }
}

/**
 * Records in IndexedDB (database xetkit-uploads, store records, keyed by
 * [scope, name]): each write is one transaction, whole or not at all.
 */
export function indexedDBStore() {
  let db = null;
  const open = () => (db ??= new Promise((resolve, reject) => {
    const r = indexedDB.open(FOLDER, 1);
    r.onupgradeneeded = () => r.result.createObjectStore("records");
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => { db = null; reject(r.error); };
  }));
  // run performs one request in a transaction and resolves once the
  // transaction is committed (durable, as far as the browser makes it).
  const run = async (mode, req) => {
    const t = (await open()).transaction("records", mode, { durability: "strict" });
    const r = req(t.objectStore("records"));
    return new Promise((resolve, reject) => {
      t.oncomplete = () => resolve(r.result);
      t.onerror = t.onabort = () => reject(t.error ?? r.error);
    });
  };
  return {
    async list() {
      const out = [];
      const t = (await open()).transaction("records", "readonly");
      await new Promise((resolve, reject) => {
        const c = t.objectStore("records").openCursor();
        c.onsuccess = () => {
          const cur = c.result;
          if (!cur) return resolve();
          out.push({ scope: cur.key[0], name: cur.key[1], size: cur.value.byteLength });
          cur.continue();
        };
        c.onerror = () => reject(c.error);
      });
      return out;
    },
    async read(scope, name) {
      const v = await run("readonly", (s) => s.get([scope, name]));
      return v === undefined ? null : new Uint8Array(v);
    },
    async write(scope, name, bytes) {
      const copy = bytes.slice().buffer; // bytes may be a view into Go's memory
      await run("readwrite", (s) => s.put(copy, [scope, name]));
    },
    async remove(scope, name) {
      await run("readwrite", (s) => s.delete([scope, name]));
    },
  };
}
