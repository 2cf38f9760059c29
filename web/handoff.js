// Files handed from the hub's pages to the viewer: a file dropped on any
// page of the hub is put here (IndexedDB keeps a File as it is, however
// big, without reading it) and the page goes to the viewer, which takes
// them at start and opens each. The one place both sides meet.

const DB = "xetkit-handoff";
const STORE = "files";

function openDB() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { autoIncrement: true });
    req.onerror = () => reject(req.error);
    req.onsuccess = () => resolve(req.result);
  });
}

/** Keeps files for the viewer to open. */
export async function handOff(files) {
  const db = await openDB();
  await new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, "readwrite");
    for (const f of files) tx.objectStore(STORE).add(f);
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}

/** Takes (and forgets) the files handed over: [File]. */
export async function takeHandoff() {
  const db = await openDB();
  const files = await new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, "readwrite");
    const all = tx.objectStore(STORE).getAll();
    tx.objectStore(STORE).clear();
    tx.oncomplete = () => resolve(all.result || []);
    tx.onerror = () => reject(tx.error);
  });
  db.close();
  return files;
}
