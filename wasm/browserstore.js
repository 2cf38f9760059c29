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

// sessionRules tells which sessions a page still holds, and whether a
// temporary file is left from one that is gone. It runs in the record
// worker too, by its text, so it uses nothing from around it.
function sessionRules({ LOCK, STALE_MS }) {
  return {
    // live returns the sessions some page holds, or null without Web Locks.
    async live() {
      if (typeof navigator === "undefined" || !navigator.locks) return null;
      const { held = [], pending = [] } = await navigator.locks.query();
      return new Set([...held, ...pending].map((l) => l.name).filter((n) => n?.startsWith(LOCK)).map((n) => n.slice(LOCK.length)));
    },
    // leftOver: a temporary file (<name>.<session>.<random>.part) whose
    // session no page holds, or, without Web Locks, an old one.
    leftOver: (name, lastModified, live) => live ? !live.has(name.split(".").at(-3)) : Date.now() - lastModified > STALE_MS,
  };
}
const { live: liveSessions, leftOver } = sessionRules({ LOCK, STALE_MS });

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
 * Records in the Origin Private File System, folder xetkit-uploads/<scope>/.
 *
 * Where the browser lets a worker write (createSyncAccessHandle, which
 * only workers have), a worker of the page's own keeps them: the records
 * it writes to a scope go into one journal, <session>.journal (see
 * journalCodec), appended through one handle held open, so that a record
 * costs a write and a flush in the worker's thread. A file per record
 * cost a call to the browser process for each of creating, opening,
 * closing and moving it, about 3 ms of its CPU per record: on two cores,
 * a few percent of an upload's speed. The journals of pages gone (a
 * reload, a crash) are read as they are, and folded into the worker's
 * own the first time it changes the scope, then deleted; a journal is
 * deleted once it holds no record, and a folder once it is empty.
 *
 * The worker takes every call, so the page's thread, busy building
 * xorbs, is not waited for: a write is posted in the call itself, and the
 * record is durable within a millisecond or two whatever the page does.
 * The worker's answer would reach Go only at the page's next turn (100-250
 * ms apart on a busy page); where the page is cross-origin isolated, the
 * call's promise carries done(), which Go asks without waiting for a turn
 * (ResumeStore in xetkit.d.ts).
 *
 * Where no such worker can run, the page writes a file per record: to a
 * temporary file beside it, moved to its name once closed, so a reload
 * or a crash mid-write leaves no file under a record's name (where move()
 * is missing, in place: the file system keeps a writable's bytes apart
 * until close()). It reads journals left by a worker, and takes a record
 * out of one by writing the journal again without it. onPage: true makes
 * every call on the page, as there (for tests).
 */
export function opfsStore({ onPage: pageOnly = false } = {}) {
  const base = async (create) => (await navigator.storage.getDirectory()).getDirectoryHandle(FOLDER, { create });
  // The scopes' folders, kept: each step of a write waits for the page's
  // event loop, which a busy upload turns only now and then.
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
  const { replay, rewrite } = journalCodec();
  // journalHolding returns the journal of dir holding record name and the
  // journal's bytes, or null.
  const journalHolding = async (dir, name) => {
    for await (const [file, h] of dir.entries()) {
      if (h.kind !== "file" || !file.endsWith(JOURNAL)) continue;
      const bytes = new Uint8Array(await (await h.getFile()).arrayBuffer());
      const at = replay(bytes).live.get(name);
      if (at) return { file, bytes, at };
    }
    return null;
  };
  const onPage = {
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
            if (name.endsWith(JOURNAL)) {
              for (const [n, [, len]] of replay(new Uint8Array(await f.arrayBuffer())).live) out.push({ scope, name: n, size: len });
            } else if (!name.endsWith(PART)) out.push({ scope, name, size: f.size });
            else if (leftOver(name, f.lastModified, live)) await dir.removeEntry(name);
          } catch { /* removed meanwhile */ }
        }
      }
      return out;
    },
    async read(scope, name) {
      try {
        return await inFolder(scope, false, async (dir) => {
          try {
            return new Uint8Array(await (await (await dir.getFileHandle(name)).getFile()).arrayBuffer());
          } catch (e) {
            const j = missing(e) && await journalHolding(dir, name);
            if (!j) throw e;
            return j.bytes.slice(j.at[0], j.at[0] + j.at[1]);
          }
        });
      } catch (e) {
        if (missing(e)) return null;
        throw e;
      }
    },
    // A remove of the scope's last record may take its folder away while
    // this writes: then the folder is made again.
    write: (scope, name, bytes) => inFolder(scope, true, (dir) => writeWhole(dir, name, bytes)),
    // Where move() is missing this fails, and the record is written again.
    rename: (scope, name, to) => inFolder(scope, false, async (dir) => (await dir.getFileHandle(name)).move(to)),
    async remove(scope, name) {
      try {
        await inFolder(scope, false, async (dir) => {
          await dir.removeEntry(name).catch(async (e) => {
            const j = missing(e) && await journalHolding(dir, name);
            if (!j) throw e;
            const rest = rewrite(j.bytes, name);
            await (rest ? writeWhole(dir, j.file, rest) : dir.removeEntry(j.file));
          });
        });
      } catch (e) {
        if (!missing(e)) throw e;
      }
      try {
        await (await base(false)).removeEntry(scope);
        folders.delete(scope);
      } catch { /* not empty */ }
    },
  };
  const worker = pageOnly ? { ready: null, up: Promise.resolve(null) } : recordWorker();
  // through sends a call to the worker once it is up (at once when it
  // is), else makes it on the page. arg is a write's bytes, a rename's new
  // name.
  const through = (op) => (scope, name, arg) => {
    holdSession();
    const msg = { op, scope, name, session, ...(op === "write" ? { bytes: arg.slice() } : op === "rename" ? { to: arg } : {}) };
    const post = (w) => w ? w.call(msg) : onPage[op](scope, name, arg);
    return worker.ready ? post(worker.ready) : worker.up.then(post);
  };
  return {
    list: through("list"),
    read: through("read"),
    write: through("write"),
    rename: through("rename"),
    remove: through("remove"),
  };
}

const JOURNAL = ".journal";

// journalCodec reads and writes journals: a header, then entries one
// after another, each
//
//	op (1 put, 2 rename, 3 remove)  u8
//	name length, name               u8, bytes
//	put: data length, data          u32 LE, bytes
//	rename: new name length, name   u8, bytes
//	CRC-32 of the entry's bytes before it   u32 LE
//
// A record is what the last entry naming it left. Replay stops at the
// first entry cut short or failing its check (a crash during an append):
// what comes before it stands. It runs in the record worker too, by its
// text, so it uses nothing from around it.
export function journalCodec() {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const HEADER = enc.encode("xetkit upload journal 1\n");
  const PUT = 1, RENAME = 2, REMOVE = 3;
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  const crc32 = (b) => {
    let c = -1;
    for (let i = 0; i < b.length; i++) c = table[(c ^ b[i]) & 0xff] ^ (c >>> 8);
    return ~c >>> 0;
  };
  // entry returns the bytes of one entry; arg is a put's data, a
  // rename's new name.
  const entry = (op, name, arg) => {
    const n = enc.encode(name);
    const to = op === RENAME ? enc.encode(arg) : null;
    const size = 2 + n.length + (op === PUT ? 4 + arg.byteLength : op === RENAME ? 1 + to.length : 0);
    const out = new Uint8Array(size + 4);
    const v = new DataView(out.buffer);
    out[0] = op;
    out[1] = n.length;
    out.set(n, 2);
    let o = 2 + n.length;
    if (op === PUT) {
      v.setUint32(o, arg.byteLength, true);
      out.set(arg, o + 4);
    } else if (op === RENAME) {
      out[o] = to.length;
      out.set(to, o + 1);
    }
    v.setUint32(size, crc32(out.subarray(0, size)), true);
    return out;
  };
  // replay returns the records in a journal's bytes, name → [offset,
  // length] of the data, and where its last whole entry ends (0: not a
  // journal).
  const replay = (b) => {
    const live = new Map();
    if (b.length < HEADER.length || HEADER.some((x, i) => b[i] !== x)) return { live, end: 0 };
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    let o = HEADER.length;
    while (o + 2 <= b.length) {
      const op = b[o];
      let p = o + 2 + b[o + 1];
      let data, to;
      if (op === PUT && p + 4 <= b.length) {
        data = [p + 4, v.getUint32(p, true)];
        p += 4 + data[1];
      } else if (op === RENAME && p + 1 <= b.length) {
        to = [p + 1, p + 1 + b[p]];
        p = to[1];
      } else if (op !== REMOVE) break;
      if (p + 4 > b.length || v.getUint32(p, true) !== crc32(b.subarray(o, p))) break;
      const name = dec.decode(b.subarray(o + 2, o + 2 + b[o + 1]));
      const was = live.get(name);
      live.delete(name);
      if (op === PUT) live.set(name, data);
      else if (op === RENAME && was) live.set(dec.decode(b.subarray(to[0], to[1])), was);
      o = p + 4;
    }
    return { live, end: o };
  };
  // rewrite returns a journal holding the records of b but drop, or null
  // where none is left.
  const rewrite = (b, drop) => {
    const parts = [HEADER];
    for (const [name, [at, len]] of replay(b).live) if (name !== drop) parts.push(entry(PUT, name, b.subarray(at, at + len)));
    if (parts.length === 1) return null;
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
    return out;
  };
  return { HEADER, PUT, RENAME, REMOVE, entry, replay, rewrite };
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
      const source = `(${recordWorkerMain})(${journalCodec}, ${sessionRules}, ${JSON.stringify({ FOLDER, JOURNAL, PART, STALE_MS, LOCK })})`;
      w = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })), { name: "xetkit-records" });
    } catch {
      return resolve(null);
    }
    const calls = new Map();
    let next = 0;
    // Where the page is cross-origin isolated, the worker also marks each
    // write, rename and remove it has done in memory shared with the
    // page, and the call's promise carries done(), which reads that mark:
    // a busy page hears of the record at once, not when its event loop
    // next turns.
    const marks = typeof SharedArrayBuffer === "function" && globalThis.crossOriginIsolated
      ? new Int32Array(new SharedArrayBuffer(4 * MARKS)) : null;
    if (marks) w.postMessage({ marks });
    const call = (msg) => {
      const id = next;
      next = (next + 1) % MAX_ID;
      let answered = false;
      const p = new Promise((res, rej) => {
        calls.set(id, { res: (v) => { answered = true; res(v); }, rej });
        w.postMessage({ ...msg, id }, msg.bytes ? [msg.bytes.buffer] : []);
      });
      // The slot is the mark of call id until call id + MARKS is done,
      // long after this call's answer came.
      if (marks && msg.op !== "list" && msg.op !== "read") p.done = () => answered || Atomics.load(marks, id % MARKS) === id + 1;
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
      else c?.res(m.value);
    };
    // A worker that cannot start (a policy forbids blob: workers) or
    // dies leaves the calls to the page; those it was given fail.
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
// its text, given journalCodec and the store's constants): it says
// whether it can write, then makes the page's calls one at a time.
function recordWorkerMain(journalCodec, sessionRules, { FOLDER, JOURNAL, PART, STALE_MS, LOCK }) {
  const able = typeof FileSystemSyncAccessHandle !== "undefined" && typeof FileSystemFileHandle?.prototype.move === "function"
    && typeof navigator.storage?.getDirectory === "function";
  const { HEADER, PUT, RENAME, REMOVE, entry, replay } = journalCodec();
  const missing = (e) => e?.name === "NotFoundError";
  const root = async (create) => (await navigator.storage.getDirectory()).getDirectoryHandle(FOLDER, { create });
  const { live: sessions, leftOver } = sessionRules({ LOCK, STALE_MS });

  // Journals read, by folder and file, kept while the file is unchanged:
  // a resumed upload reads each of its records, which one read per record
  // of the whole journal would make quadratic.
  const readCache = new Map();
  // scan reads a scope's folder: the journals in it but own (the live
  // pages' can be unreadable: they are left out), the records kept as
  // files of their own (name → size), and the temporary files (name →
  // time last modified).
  const scan = async (scope, dir, own) => {
    const journals = [];
    const files = new Map();
    const parts = new Map();
    for await (const [file, h] of dir.entries()) {
      if (h.kind !== "file" || file === own) continue;
      try {
        const f = await h.getFile();
        if (!file.endsWith(JOURNAL)) {
          if (file.endsWith(PART)) parts.set(file, f.lastModified);
          else files.set(file, f.size);
          continue;
        }
        const key = `${scope}/${file}`;
        let j = readCache.get(key);
        if (j?.stamp !== `${f.size}/${f.lastModified}`) {
          const bytes = new Uint8Array(await f.arrayBuffer());
          j = { file, session: file.slice(0, -JOURNAL.length), stamp: `${f.size}/${f.lastModified}`, bytes, live: replay(bytes).live };
          readCache.set(key, j);
        }
        journals.push(j);
      } catch { /* removed meanwhile, or open in another page */ }
    }
    // Journals gone from the folder (taken over by another page) go from
    // the cache too.
    for (const key of readCache.keys()) {
      if (key.startsWith(`${scope}/`) && !journals.some((j) => key === `${scope}/${j.file}`) && key !== `${scope}/${own}`) readCache.delete(key);
    }
    return { journals, files, parts };
  };

  // The scopes this worker has looked at: the folder, and the journal it
  // appends to ({handle, file, size, live: name → [offset, length]}),
  // null where it holds none.
  const scopes = new Map();
  const scopeOf = async (name, create) => {
    let s = scopes.get(name);
    if (!s) {
      s = { name, dir: await (await root(create)).getDirectoryHandle(name, { create }), journal: null, adopted: false, files: new Set() };
      scopes.set(name, s);
    }
    return s;
  };
  // Entries are staged, then written together: a write of an access
  // handle is one call to the browser process where the profile keeps
  // OPFS in memory (incognito), and a rename or remove need not be
  // durable at once (a crash that loses one leaves the record under its
  // old name, as a crash just before the call would have), so they go
  // with the next record written.
  const stage = (j, b) => {
    j.staged.push(b);
    j.stagedBytes += b.length;
  };
  const put = (j, name, data) => {
    stage(j, entry(PUT, name, data));
    j.live.set(name, [j.size + j.stagedBytes - 4 - data.length, data.length]);
  };
  // commit writes what is staged and makes the journal durable.
  const commit = (j) => {
    if (j.stagedBytes === 0) return;
    const b = j.staged.length === 1 ? j.staged[0] : new Uint8Array(j.stagedBytes);
    if (b !== j.staged[0]) j.staged.reduce((at, e) => (b.set(e, at), at + e.length), 0);
    if (j.handle.write(b, { at: j.size }) !== b.length) throw new Error("short write");
    j.handle.flush();
    j.size += b.length;
    j.staged = [];
    j.stagedBytes = 0;
  };
  // journal returns the scope's journal, opened (made) at need. The first
  // time this worker changes a scope, the records of the journals of
  // pages gone are copied into its own, made durable, and their journals
  // deleted.
  const journal = async (s, session) => {
    const own = session + JOURNAL;
    if (!s.journal) {
      const handle = await (await s.dir.getFileHandle(own, { create: true })).createSyncAccessHandle();
      const b = new Uint8Array(handle.getSize());
      handle.read(b, { at: 0 });
      const { live, end } = replay(b);
      s.journal = { handle, file: own, size: end, live, staged: [], stagedBytes: 0 };
      if (b.length !== end) handle.truncate(end); // a torn last entry, or no journal at all
      if (end === 0) stage(s.journal, HEADER);
    }
    if (!s.adopted) {
      s.adopted = true;
      const alive = await sessions();
      const { journals, files } = await scan(s.name, s.dir, own);
      s.files = new Set(files.keys());
      const gone = journals.filter((o) => !alive?.has(o.session));
      for (const o of gone) for (const [name, [at, len]] of o.live) put(s.journal, name, o.bytes.subarray(at, at + len));
      commit(s.journal);
      for (const o of gone) {
        await s.dir.removeEntry(o.file).catch(() => {});
        readCache.delete(`${s.name}/${o.file}`);
      }
    }
    return s.journal;
  };
  // settle deletes the scope's journal once it holds no record, and the
  // scope's folder if that empties it.
  const settle = async (s) => {
    if (s.journal?.live.size !== 0) return;
    // The removes are made durable first: a journal that cannot be
    // deleted, or a crash before it is, holds no record.
    commit(s.journal);
    s.journal.handle.close();
    await s.dir.removeEntry(s.journal.file).catch(() => {});
    s.journal = null;
    try {
      await (await root(false)).removeEntry(s.name);
      scopes.delete(s.name);
    } catch { /* not empty */ }
  };
  const ops = {
    async write(m) {
      const s = await scopeOf(m.scope, true);
      const j = await journal(s, m.session);
      const was = j.live.get(m.name);
      put(j, m.name, m.bytes);
      try {
        commit(j);
      } catch (e) {
        // Not written (the disk is full...): the record is as it was;
        // what was staged before it is written with the next.
        j.stagedBytes -= j.staged.pop().length;
        if (was) j.live.set(m.name, was);
        else j.live.delete(m.name);
        throw e;
      }
      // A file of the same name (the page wrote it) would shadow this.
      if (s.files.delete(m.name)) await s.dir.removeEntry(m.name).catch(() => {});
    },
    async rename(m) {
      const s = await scopeOf(m.scope, false);
      const j = await journal(s, m.session);
      const at = j.live.get(m.name);
      if (at) {
        stage(j, entry(RENAME, m.name, m.to));
        j.live.delete(m.name);
        j.live.set(m.to, at);
        return;
      }
      await (await s.dir.getFileHandle(m.name)).move(m.to);
      s.files.delete(m.name);
      s.files.add(m.to);
      await settle(s);
    },
    async remove(m) {
      let s;
      try { s = await scopeOf(m.scope, false); } catch (e) { if (missing(e)) return; throw e; }
      const j = await journal(s, m.session);
      if (j.live.delete(m.name)) stage(j, entry(REMOVE, m.name));
      else {
        await s.dir.removeEntry(m.name).catch((e) => { if (!missing(e)) throw e; });
        s.files.delete(m.name);
      }
      await settle(s);
    },
    async list(m) {
      let r;
      try { r = await root(false); } catch (e) { if (missing(e)) return []; throw e; }
      const alive = await sessions();
      const out = [];
      for await (const [scope, dir] of r.entries()) {
        if (dir.kind !== "directory") continue;
        const own = scopes.get(scope)?.journal;
        const { journals, files, parts } = await scan(scope, dir, own?.file);
        // What a journal holds wins over a file of the same name.
        const found = new Map(files);
        for (const j of [...journals, own ?? { live: [] }]) for (const [name, [, len]] of j.live) found.set(name, len);
        for (const [name, size] of found) out.push({ scope, name, size });
        // A temporary file of a page gone (its write never finished).
        for (const [name, at] of parts) if (leftOver(name, at, alive)) await dir.removeEntry(name).catch(() => {});
      }
      return out;
    },
    async read(m) {
      let s;
      try { s = await scopeOf(m.scope, false); } catch (e) { if (missing(e)) return null; throw e; }
      const at = s.journal?.live.get(m.name);
      if (at) {
        commit(s.journal);
        const b = new Uint8Array(at[1]);
        s.journal.handle.read(b, { at: at[0] });
        return b;
      }
      const { journals } = await scan(s.name, s.dir, s.journal?.file);
      for (const j of journals) {
        const at = j.live.get(m.name);
        if (at) return j.bytes.slice(at[0], at[0] + at[1]);
      }
      try {
        return new Uint8Array(await (await (await s.dir.getFileHandle(m.name)).getFile()).arrayBuffer());
      } catch (e) {
        if (missing(e)) return null;
        throw e;
      }
    },
  };
  // One call at a time. A folder gone since it was kept (another tab
  // removed it) is looked up again, once.
  let queue = Promise.resolve();
  const run = async (m) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await ops[m.op](m);
      } catch (e) {
        const s = scopes.get(m.scope);
        if (!missing(e) || attempt > 0 || s?.journal) throw e;
        scopes.delete(m.scope);
      }
    }
  };
  let marks = null; // the page's ring of done marks, if it shares one
  self.onmessage = ({ data: m }) => {
    if (m.marks) {
      marks = m.marks;
      return;
    }
    queue = queue.then(() => run(m)).then(
      (value) => {
        if (marks) Atomics.store(marks, m.id % marks.length, m.id + 1);
        self.postMessage({ id: m.id, value });
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
