// The Upload, Download and Repository panels: commit files into a
// repository on a hub (by default the one "xetkit serve" runs beside this
// page), list a repository's files, and get them back, verified.
// Everything protocol-related happens in the module (xk.upload,
// xk.download, xk.listFiles); this file is the form, the progress and the
// results.

import { el, sbytes, bytes as fbytes, num, hashCell, copyButton, describeError, nextFrame, download } from "./util.js";
import { xk } from "./xk.js";

const KEY = "xetkit.hub"; // hub, repo type, repo and revision are remembered; the token is not

let dialog = null;
let ctxRef = null;
const $ = (sel) => dialog.querySelector(sel);

/** Creates the panels (hidden) and wires the header buttons to them. */
export function setupTransfer(ctx) {
  ctxRef = ctx;
  dialog = build();
  document.body.append(dialog);
  document.getElementById("upload-btn")?.addEventListener("click", () => open("upload"));
  document.getElementById("download-btn")?.addEventListener("click", () => open("download"));
  document.getElementById("repo-btn")?.addEventListener("click", () => open("repo"));
  // For the console and the tests: the panels' state.
  window.xetkitTransfer = { open, batches, showPending };
}

/**
 * Opens the Repository tab on a repository of this hub and shows how one
 * of its files is stored (its terms, xorbs and the files sharing its
 * chunks): where a file's page on the hub links ("How it is stored").
 */
export async function showStored({ repoType = "model", repo, revision = "main", path }) {
  $("#hub-url").value = location.origin;
  $("#hub-type").value = repoType;
  $("#hub-repo").value = repo;
  $("#hub-rev").value = revision;
  open("repo");
  await listRepo();
  const row = [...document.querySelectorAll("#repo-files tr.xf-entry")].find((r) => r.dataset.path === path);
  row?.querySelector(".xf-terms-btn")?.click();
}

const TABS = ["upload", "download", "repo"];

/** Shows the dialog on the Upload, Download or Repository tab. */
export function open(tab = "upload") {
  selectTab(tab);
  if (!dialog.open) dialog.showModal();
  if (tab === "upload") showPending();
  ({ upload: $("#up-files-btn"), download: $("#dl-target"), repo: $("#repo-list") })[tab].focus();
}

function saved() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}");
  } catch {
    return {};
  }
}

function remember() {
  try {
    localStorage.setItem(KEY, JSON.stringify({ hub: $("#hub-url").value, repoType: $("#hub-type").value, repo: $("#hub-repo").value, revision: $("#hub-rev").value }));
  } catch { /* storage may be off */ }
}

function build() {
  const s = saved();
  const field = (id, label, input, hint) => el("div.xf-field", el("label", { for: id }, label), input, hint ? el("div.xf-hint", hint) : null);
  const conn = el("form.xf-conn", { "aria-label": "Hub and repository", onsubmit: (e) => e.preventDefault() },
    field("hub-url", "Hub", el("input#hub-url", { type: "url", value: s.hub || location.origin, spellcheck: "false", autocomplete: "off" })),
    field("hub-token", "Token", el("input#hub-token", { type: "password", autocomplete: "off", spellcheck: "false", placeholder: "hub user token" })),
    field("hub-repo", "Repository", el("div.xf-repo",
      el("select#hub-type", { "aria-label": "Repository type" },
        ["model", "dataset", "space"].map((t) => el("option", { value: t, selected: (s.repoType || "model") === t }, t))),
      el("input#hub-repo", { type: "text", value: s.repo || "", placeholder: "namespace/name", spellcheck: "false", autocomplete: "off" }))),
    field("hub-rev", "Revision", el("input#hub-rev", { type: "text", value: s.revision || "main", spellcheck: "false", autocomplete: "off", placeholder: "main" })));
  for (const id of ["#hub-url", "#hub-type", "#hub-repo", "#hub-rev"]) conn.querySelector(id).addEventListener("change", remember);

  const tabs = el("div.xf-tabs", { role: "tablist", "aria-label": "Transfer" },
    el("button.xf-tab#tab-upload", { type: "button", role: "tab", "aria-controls": "upload-panel", onclick: () => { selectTab("upload"); showPending(); } }, "Upload"),
    el("button.xf-tab#tab-download", { type: "button", role: "tab", "aria-controls": "download-panel", onclick: () => selectTab("download") }, "Download"),
    el("button.xf-tab#tab-repo", { type: "button", role: "tab", "aria-controls": "repo-panel", onclick: () => selectTab("repo") }, "Repository"));

  const fileInput = el("input#up-files", { type: "file", multiple: true, hidden: true, onchange: () => showPicked() });
  const upload = el("section.xf-panel#upload-panel", { role: "tabpanel", "aria-labelledby": "tab-upload" },
    el("div.xf-row",
      el("button.btn#up-files-btn", { type: "button", onclick: () => fileInput.click() }, "Choose files…"), fileInput,
      el("span.xf-picked#up-picked.muted", "No files chosen"),
      el("button.btn.primary#up-start", { type: "button", disabled: true, onclick: () => startUpload() }, "Upload")),
    el("div.xf-commit",
      field("up-prefix", "Path prefix", el("input#up-prefix", { type: "text", placeholder: "folder/ (optional)", spellcheck: "false", autocomplete: "off" })),
      field("up-message", "Commit message", el("input#up-message", { type: "text", placeholder: "Upload with xetkit", autocomplete: "off" })),
      el("label.xf-check", el("input#up-commit", { type: "checkbox", checked: true }), " commit (else: CAS only, no path)")),
    el("section.xf-pending#up-pending", { "aria-label": "Unfinished uploads", hidden: true }),
    el("div.xf-legend.muted", { "aria-hidden": "true" },
      el("span.xf-key.xf-key-hashed"), "hashed", el("span.xf-key.xf-key-deduped"), "already on the hub", el("span.xf-key.xf-key-uploaded"), "sent"),
    el("div.xf-batches#up-batches", { "aria-live": "polite" }));

  const download = el("section.xf-panel#download-panel", { role: "tabpanel", "aria-labelledby": "tab-download" },
    el("form.xf-row", { onsubmit: (e) => { e.preventDefault(); startDownload(); } },
      el("label.sr-only", { for: "dl-target" }, "Path in the repository, or file hash"),
      el("input#dl-target", { type: "text", placeholder: "path in the repository, or a file hash", spellcheck: "false", autocomplete: "off", required: true }),
      el("button.btn.primary#dl-start", { type: "submit" }, "Download")),
    el("div.xf-downloads#dl-results", { "aria-live": "polite" }));

  const repoPanel = el("section.xf-panel#repo-panel", { role: "tabpanel", "aria-labelledby": "tab-repo" },
    el("div.xf-row",
      el("button.btn.primary#repo-list", { type: "button", onclick: () => listRepo() }, "List files"),
      el("span.xf-picked#repo-status.muted", { "aria-live": "polite" }, "The files of the repository at the revision.")),
    el("div#repo-files"));

  const d = el("dialog.dialog.xf#transfer", { "aria-labelledby": "xf-title" },
    el("div.xf-head",
      el("h2#xf-title", "Hub transfer"),
      el("button.xf-close", { type: "button", "aria-label": "Close", title: "Close (Esc)", onclick: () => d.close() }, "×")),
    conn, tabs, upload, download, repoPanel);
  return d;
}

function selectTab(tab) {
  for (const t of TABS) {
    const on = t === tab;
    $(`#tab-${t}`).setAttribute("aria-selected", on ? "true" : "false");
    $(`#tab-${t}`).classList.toggle("current", on);
    $(`#${t}-panel`).hidden = !on;
  }
}

function connection() {
  const hub = $("#hub-url").value.trim().replace(/\/+$/, "");
  const repo = $("#hub-repo").value.trim();
  const token = $("#hub-token").value.trim();
  const repoType = $("#hub-type").value;
  const revision = $("#hub-rev").value.trim() || "main";
  if (!hub) throw new Error("Enter the hub's URL.");
  if (!/^[^/\s]+\/[^/\s]+$/.test(repo)) throw new Error("Enter the repository as namespace/name.");
  return { hub, repo, repoType, revision, token: token || undefined };
}

function showPicked() {
  const files = [...$("#up-files").files];
  const total = files.reduce((s, f) => s + f.size, 0);
  $("#up-picked").textContent = files.length
    ? `${num(files.length)} file${files.length === 1 ? "" : "s"}, ${sbytes(total)}`
    : "No files chosen";
  $("#up-picked").classList.toggle("muted", files.length === 0);
  $("#up-start").disabled = files.length === 0;
}

// ---- upload ----------------------------------------------------------------

const batches = [];

async function startUpload() {
  const input = $("#up-files");
  const files = [...input.files];
  if (!files.length) return;
  let conn;
  try {
    conn = connection();
  } catch (err) {
    return showBatchError(err);
  }
  remember();
  input.value = "";
  showPicked();
  const commit = $("#up-commit").checked ? { message: $("#up-message").value.trim() || undefined } : false;
  const prefix = $("#up-prefix").value.trim();
  const batch = { id: batches.length + 1, files, state: "running", results: null, commit: null, error: null, started: performance.now() };
  batches.push(batch);
  const view = batchView(batch);
  $("#up-batches").prepend(view.root);
  let pending = null;
  const progress = new Array(files.length).fill(null);
  const changed = new Set();
  try {
    const m = await xk();
    const res = await m.upload(files, {
      ...conn,
      commit,
      prefix,
      onProgress: (p) => {
        progress[p.index] = p;
        changed.add(p.index);
        // Repaint at most once a frame, only the files that changed.
        pending ??= requestAnimationFrame(() => { pending = null; view.progress(progress, changed); changed.clear(); });
      },
    });
    batch.results = res.files;
    batch.commit = res.commit;
    batch.state = "done";
  } catch (err) {
    batch.error = err;
    batch.state = "failed";
  }
  batch.ms = performance.now() - batch.started;
  if (pending) cancelAnimationFrame(pending);
  view.progress(progress, changed);
  await view.finish();
  showPending();
}

// ---- unfinished uploads ----------------------------------------------------

/**
 * Lists what the upload state in this browser holds of unfinished uploads
 * (interrupted by a reload, a crash, a lost network): per repository, the
 * xorbs the hub already accepted. Picking the same files for the same
 * repository resumes: only the rest is sent.
 */
async function showPending() {
  const box = $("#up-pending");
  let list;
  try {
    list = await (await xk()).pendingUploads();
  } catch (err) {
    box.hidden = false;
    box.dataset.state = "failed";
    box.replaceChildren(el("p.muted", `Unfinished uploads cannot be listed: ${describeError(err).msg}`));
    return;
  }
  box.dataset.state = "done";
  box.dataset.count = String(list.length);
  box.hidden = list.length === 0;
  box.replaceChildren(
    el("h3.xf-pending-title", "Unfinished uploads"),
    el("p.muted.xf-pending-hint", "Choose the same files for the same repository to finish one: what the hub already has is not sent again."),
    el("ul.xf-pending-list", list.map((p) => {
      const r = p.repo;
      const name = r ? `${r.repoType === "model" ? "" : r.repoType + "s/"}${r.repo}` : "an unnamed repository";
      return el("li.xf-pending-item", { dataset: { scope: p.scope, repo: r?.repo ?? "", bytes: String(p.bytes), xorbs: String(p.xorbs), unconfirmed: String(p.unconfirmed) } },
        el("strong.xf-pending-repo", name),
        r ? el("span.muted", ` on ${r.hub}`) : null,
        el("span.xf-pending-what", `: ${sbytes(p.bytes)} stored in ${num(p.xorbs)} xorb${p.xorbs === 1 ? "" : "s"}${p.unconfirmed ? ` (and ${num(p.unconfirmed)} being sent when it stopped, to be checked with the hub)` : ""}, `),
        el("time.xf-pending-when", { datetime: p.last.toISOString(), title: `from ${p.first.toLocaleString()} to ${p.last.toLocaleString()}` }, `last ${p.last.toLocaleString()}`),
        r ? el("button.btn.xf-pending-use", { type: "button", "aria-label": `Use this repository: ${name}`, onclick: () => useRepo(r) }, "Use this repository") : null);
    })));
}

// useRepo fills the form with an unfinished upload's hub and repository.
function useRepo(r) {
  $("#hub-url").value = r.hub;
  $("#hub-type").value = r.repoType;
  $("#hub-repo").value = r.repo;
  remember();
  $("#up-files-btn").focus();
}

function showBatchError(err) {
  const e = el("div.error.xf-error", { role: "alert" }, describeError(err).msg);
  $("#up-batches").prepend(e);
  setTimeout(() => e.remove(), 8000);
}

// ROWS_A_FRAME is how many files' rows are built, or filled in at the
// end, between two frames: a folder of thousands of files is listed
// without a long task.
const ROWS_A_FRAME = 400;

function bar(p, size) {
  const b = el("div.xf-bar", { role: "progressbar", "aria-label": "Progress", "aria-valuemin": "0", "aria-valuemax": "100" },
    el("div.xf-bar-hashed"), el("div.xf-bar-deduped"), el("div.xf-bar-uploaded"));
  setBar(b, p, size);
  return b;
}

// setBar shows p's progress on a bar made by bar(): each part scaled to
// its share (a transform: no layout, see style.css).
function setBar(b, p, size) {
  const share = (n) => (size > 0 ? Math.min(1, n / size) : 1);
  b.setAttribute("aria-valuenow", String(Math.round(size > 0 ? (100 * ((p?.deduped || 0) + (p?.uploaded || 0))) / size : p?.done ? 100 : 0)));
  const [hashed, deduped, uploaded] = b.children;
  hashed.style.transform = `scaleX(${share(p?.hashed || 0)})`;
  deduped.style.transform = `scaleX(${share(p?.deduped || 0)})`;
  uploaded.style.transform = `translateX(${100 * share(p?.deduped || 0)}%) scaleX(${share(p?.uploaded || 0)})`;
}

function fileStatus(p, size, state) {
  if (state === "failed") return "stopped";
  if (p?.done) return "done";
  if (!p) return "waiting";
  const stored = p.deduped + p.uploaded;
  const resumed = p.resumed ? ` · ${sbytes(p.resumed)} resumed` : "";
  if (p.hashed < size) return `hashing ${Math.floor((100 * p.hashed) / size)}%${resumed}`;
  return `uploading ${size ? Math.floor((100 * stored) / size) : 100}%${resumed}`;
}

function batchView(batch) {
  const total = batch.files.reduce((s, f) => s + f.size, 0);
  const tbody = el("tbody");
  const rows = [];
  let latest = null; // the progress list last shown, for rows shown later
  // Only the rows in view are repainted as progress comes (each repaint
  // of thousands costs the page its frames in layout and paint); a row is
  // painted as it comes into view, and every row at the end.
  const inView = new Set();
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const i = Number(e.target.dataset.index);
      if (!e.isIntersecting) {
        inView.delete(i);
        continue;
      }
      inView.add(i);
      if (latest?.[i]) paint(i, latest[i]);
    }
  });
  const makeRow = (i) => {
    const f = batch.files[i];
    const row = el("tr.xf-file", { dataset: { index: String(i) } },
      el("td.xf-name", { title: f.name }, f.name),
      el("td.xf-size.num", sbytes(f.size)),
      el("td.xf-prog", bar(null, f.size)),
      el("td.xf-status.muted", el("span.xf-stat", "waiting")),
      el("td.xf-hash"), el("td.xf-dedupe.num"));
    rows[i] = row;
    seen.observe(row);
    return row;
  };
  const paint = (i, p) => {
    const size = batch.files[i].size;
    setBar(rows[i].querySelector(".xf-bar"), p, size);
    rows[i].querySelector(".xf-stat").textContent = fileStatus(p, size, batch.state);
    rows[i].dataset.resumed = String(p.resumed || 0);
  };
  // The first rows at once, the rest a frame at a time (built: how many).
  let built = Math.min(batch.files.length, ROWS_A_FRAME);
  tbody.append(...Array.from({ length: built }, (_, i) => makeRow(i)));
  const building = (async () => {
    while (built < batch.files.length) {
      await nextFrame();
      const to = Math.min(batch.files.length, built + ROWS_A_FRAME);
      tbody.append(...Array.from({ length: to - built }, (_, k) => makeRow(built + k)));
      built = to;
    }
  })();
  const summary = el("div.xf-summary", `Uploading ${num(batch.files.length)} file${batch.files.length === 1 ? "" : "s"}, ${sbytes(total)}…`);
  const cols = el("colgroup", ["name", "size", "prog", "status", "hash", "dedupe"].map((c) => el("col.xf-col-" + c)));
  const root = el("section.xf-batch", { dataset: { state: "running", batch: String(batch.id) }, "aria-label": `Upload ${batch.id}` },
    summary,
    el("div.xf-table-wrap", el("table.xf-table", cols,
      el("thead", el("tr", el("th", "File"), el("th.num", "Size"), el("th", "Progress"), el("th", "Status"), el("th", "File hash"), el("th.num", "Deduped"))),
      tbody)));
  // finishRow fills in a file's row with its result.
  const finishRow = (r, i) => {
    const row = rows[i];
    row.dataset.resumed = String(r.resumedBytes);
    row.dataset.fileHash = r.hash ?? "";
    row.dataset.path = r.path;
    row.dataset.sha256 = r.sha256;
    setBar(row.querySelector(".xf-bar"), { hashed: r.size, deduped: r.dedupedBytes, uploaded: r.uploadedBytes, done: true }, r.size);
    const st = row.querySelector(".xf-status");
    st.firstChild.textContent = "done";
    st.classList.remove("muted");
    st.classList.add("ok");
    row.querySelector(".xf-name").textContent = r.path;
    row.querySelector(".xf-hash").replaceChildren(r.hash === null
      ? el("span.muted.xf-inline", { title: `SHA-256 ${r.sha256}\nA small text file: the hub keeps it inside the commit, not in CAS` }, "inline")
      : hashCell(r.hash, {
        title: `${r.hash}\nSHA-256 ${r.sha256}\nClick to download it back`,
        onclick: (e) => { e.preventDefault(); fillDownload(batch.commit ? r.path : r.hash); },
      }));
    row.querySelector(".xf-dedupe").textContent = r.size ? percent(r.dedupedBytes, r.size) : "—";
  };
  return {
    root,
    // progress repaints the files of changed (all when not given) whose
    // rows are in view.
    progress(list, changed) {
      latest = list;
      for (const i of changed ?? list.keys()) {
        if (list[i] && inView.has(i)) paint(i, list[i]);
      }
    },
    // finish shows the outcome, once every row is built and filled in
    // (a frame's worth at a time); the batch's state says so last.
    async finish() {
      await building;
      seen.disconnect();
      if (batch.state === "failed") {
        const { msg } = describeError(batch.error);
        const code = batch.error?.code ? `${batch.error.code}${batch.error.status ? " " + batch.error.status : ""}: ` : "";
        summary.replaceChildren(el("div.error", { role: "alert" }, `Upload failed — ${code}${msg}`));
        rows.forEach((r) => { if (!r.querySelector(".xf-stat").textContent.startsWith("done")) r.querySelector(".xf-stat").textContent = "stopped"; });
        root.dataset.state = batch.state;
        return;
      }
      let deduped = 0, sent = 0, resumed = 0;
      for (const [i, r] of batch.results.entries()) {
        deduped += r.dedupedBytes;
        sent += r.uploadedBytes;
        resumed += r.resumedBytes;
        finishRow(r, i);
        if ((i + 1) % ROWS_A_FRAME === 0) await nextFrame();
      }
      const size = batch.results.reduce((s, r) => s + r.size, 0);
      const secs = batch.ms / 1000;
      summary.replaceChildren(
        el("span.xf-done", "✓ Uploaded"), " ",
        el("strong", `${num(batch.results.length)} file${batch.results.length === 1 ? "" : "s"}, ${sbytes(size)}`),
        el("span.xf-nw", ` in ${secs.toFixed(1)} s`),
        " ", el("span.xf-sep", "·"), " ",
        el("span.xf-nw", "dedupe ", el("strong.xf-ratio", { title: `${fbytes(deduped)} already stored` }, percent(deduped, size))),
        " ", el("span.xf-sep", "·"), " ",
        el("span.xf-nw", "sent ", el("strong.xf-sent", { title: fbytes(sent) }, sbytes(sent)), " new"),
        ...(resumed ? [" ", el("span.xf-sep", "·"), " ", el("span.xf-nw", "resumed ",
          el("strong.xf-resumed", { title: `${fbytes(resumed)} stored by an interrupted upload, not sent again` }, sbytes(resumed)))] : []),
        ...(batch.commit ? [" ", el("span.xf-sep", "·"), " ", el("span.xf-nw", "commit ",
          el("code.xf-commit-id", { title: `commit ${batch.commit.oid}` }, batch.commit.oid.slice(0, 10)), copyButton(batch.commit.oid))] : []));
      root.dataset.state = batch.state;
    },
  };
}

// percent shows a share; near 0 and 100 with a decimal, so 99.6% never
// reads as all.
function percent(part, whole) {
  if (!whole) return "0%";
  const p = (100 * part) / whole;
  if (p === 0 || p === 100) return `${p}%`;
  return p < 1 || p > 99 ? `${p.toFixed(1)}%` : `${Math.round(p)}%`;
}

function fillDownload(target) {
  selectTab("download");
  $("#dl-target").value = target;
  $("#dl-target").focus();
}

// ---- download --------------------------------------------------------------

// A download goes straight to a file as it arrives, checked chunk by
// chunk (the page never holds the whole of it): the file the person picks
// where the browser has a save picker, else a file of the origin's
// private storage (OPFS), saved from there (a disk-backed File) with Save
// file. An OPFS download broken off (a reload, a lost network) resumes
// from what it wrote when started again. Only the latest few OPFS files
// are kept.
const KEEP = 3;
const kept = [];
const SHA_MAX = 1 << 30; // the SHA-256 is shown for files up to this size (it reads the file back whole)
const DL_FOLDER = "xetkit-downloads";

function keep(entry) {
  kept.unshift(entry);
  // A file a newer download wrote again under the same name stays.
  for (const old of kept.splice(KEEP)) old.drop(kept.some((k) => k.name === old.name));
}

// privateFile is the OPFS file a download without a save picker goes to.
async function privateFile(name) {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(DL_FOLDER, { create: true });
  return { dir, handle: await dir.getFileHandle(name, { create: true }) };
}

async function startDownload() {
  const text = $("#dl-target").value.trim();
  // 64 hex digits are a file hash; anything else is a path in the repository.
  const hash = /^[0-9a-fA-F]{64}$/.test(text) ? text.toLowerCase() : null;
  const target = hash ?? { path: text.replace(/^\/+/, "") };
  const name = hash ? `${hash.slice(0, 16)}.bin` : target.path.split("/").pop();
  // The picker first, while the click still counts as the person's.
  const picked = typeof window.showSaveFilePicker === "function"
    ? window.showSaveFilePicker({ suggestedName: name }).catch((e) => ({ failed: e })) : null;
  const out = el("div.xf-dl", { dataset: { state: "running", target: hash ?? target.path } },
    el("div.xf-dl-head", hash ? hashCell(hash) : el("code.xf-path", target.path)),
    el("div.xf-dl-status.muted", "Starting…"));
  $("#dl-results").prepend(out);
  const status = out.querySelector(".xf-dl-status");
  try {
    let handle = picked ? await picked : null;
    if (handle?.failed) {
      if (handle.failed.name !== "AbortError") throw handle.failed;
      out.dataset.state = "cancelled";
      status.textContent = "Cancelled: no file was picked.";
      return;
    }
    const inOPFS = !handle;
    let place = null;
    if (inOPFS) {
      place = await privateFile(name);
      handle = place.handle;
    }
    const conn = connection();
    remember();
    const m = await xk();
    let last = 0;
    const t0 = performance.now();
    const size = await m.download(target, {
      ...conn, to: handle,
      onProgress: ({ written, total }) => {
        const now = performance.now();
        if (now - last > 100) {
          last = now;
          status.textContent = `Downloading… ${sbytes(written)}${total ? ` of ${sbytes(total)}` : ""}`;
        }
      },
    });
    const ms = performance.now() - t0;
    const file = await handle.getFile();
    let sha = null;
    if (file.size <= SHA_MAX) {
      status.textContent = "Checking SHA-256…";
      await nextFrame();
      sha = m.hash.sha256(new Uint8Array(await file.arrayBuffer()));
    }
    out.dataset.state = "done";
    out.dataset.size = String(size);
    if (sha) out.dataset.sha256 = sha;
    const actions = el("div.actions",
      inOPFS ? el("button.btn.xf-save", { type: "button", onclick: async () => download(name, await handle.getFile()) }, "Save file")
        : el("span.xf-saved", "Saved as ", el("code", handle.name)),
      ctxRef ? el("button.btn.xf-view", {
        type: "button",
        onclick: async () => { const f = await handle.getFile(); dialog.close(); ctxRef.openBytes(name, new Uint8Array(await f.arrayBuffer())); },
      }, "Open in viewer") : null);
    status.classList.remove("muted");
    status.replaceChildren(
      el("div", el("span.xf-done", "✓ Verified"), " ",
        el("strong", sbytes(size)), ` (${num(size)} bytes) in ${(ms / 1000).toFixed(1)} s`,
        " ", el("span.xf-sep", "·"), " ",
        "every byte checked as it was written"),
      sha ? el("div.xf-sha", "SHA-256 ", el("code.xf-sha-value", sha)) : null,
      actions);
    if (inOPFS) {
      keep({
        name,
        drop: (rewritten) => {
          if (!rewritten) place.dir.removeEntry(name).catch(() => {});
          actions.replaceChildren(el("span.muted", "Download again to save or open it."));
        },
      });
    }
  } catch (err) {
    out.dataset.state = "failed";
    const e = describeError(err);
    const code = err?.code ? `${err.code}${err.status ? " " + err.status : ""}: ` : "";
    status.replaceChildren(el("div.error", { role: "alert" }, `Download failed — ${code}${e.msg}`));
  }
}

// ---- repository ------------------------------------------------------------

/** Lists the repository's files at the revision, each with its hashes and a download. */
async function listRepo() {
  const status = $("#repo-status");
  const box = $("#repo-files");
  let conn;
  try {
    conn = connection();
  } catch (err) {
    status.textContent = describeError(err).msg;
    return;
  }
  remember();
  status.textContent = "Listing…";
  box.dataset.state = "running";
  try {
    const m = await xk();
    const entries = (await m.listFiles(conn)).filter((e) => e.type === "file");
    const total = entries.reduce((s, e) => s + e.size, 0);
    status.textContent = `${num(entries.length)} file${entries.length === 1 ? "" : "s"}, ${sbytes(total)} in ${conn.repo} at ${conn.revision}`;
    const cols = el("colgroup", ["path", "size", "hash", "sha", "act"].map((c) => el("col.xf-col-r" + c)));
    const rows = entries.map((e) => el("tr.xf-entry", { dataset: { path: e.path, fileHash: e.xetHash ?? "", sha256: e.lfs?.oid ?? "" } },
      el("td.xf-name", { title: e.path }, e.path),
      el("td.num.xf-rsize", sbytes(e.size)),
      el("td.xf-hash.xf-rhash", e.xetHash ? hashCell(e.xetHash, { title: `File hash ${e.xetHash}` }) : el("span.muted", { title: "A small text file kept inside the commit, not in CAS" }, "inline")),
      el("td.xf-hash.xf-rsha", e.lfs ? hashCell(e.lfs.oid, { title: `SHA-256 ${e.lfs.oid}` }) : el("span.muted", "—")),
      el("td.xf-ract", el("div.xf-acts",
        el("button.btn.xf-get", { type: "button", "aria-label": `Download ${e.path}`, onclick: () => { fillDownload(e.path); startDownload(); } }, "Download"),
        el("button.btn.xf-peek-btn", { type: "button", "aria-label": `Peek into ${e.path}`, title: "Its first bytes (and a safetensors header), without downloading it", onclick: () => showPeek(conn, e) }, "Peek"),
        e.xetHash ? el("button.btn.xf-terms-btn", { type: "button", "aria-label": `Terms of ${e.path}`, onclick: () => showTerms(conn, e, entries) }, "Terms") : null))));
    termsCache.clear();
    box.replaceChildren(entries.length ? el("div.xf-table-wrap", el("table.xf-table.xf-repo-table", cols,
      el("thead", el("tr", el("th", "Path"), el("th.num", "Size"), el("th", "File hash"), el("th", "SHA-256"), el("th", el("span.sr-only", "Actions")))),
      el("tbody", rows))) : el("p.muted", "No files yet: upload some with a commit."),
    el("section#repo-peek", { "aria-live": "polite" }), el("section#repo-terms", { "aria-live": "polite" }));
    box.dataset.state = "done";
  } catch (err) {
    box.dataset.state = "failed";
    const e = describeError(err);
    const code = err?.code ? `${err.code}${err.status ? " " + err.status : ""}: ` : "";
    status.textContent = "";
    box.replaceChildren(el("div.error", { role: "alert" }, `Listing failed — ${code}${e.msg}`));
  }
}

// Terms of the files of the last listing, by file hash.
const termsCache = new Map();

async function termsOf(m, conn, hash) {
  if (!termsCache.has(hash)) termsCache.set(hash, m.fileTerms(hash, conn));
  return termsCache.get(hash);
}

/**
 * Shows how a file is stored: its terms (runs of chunks of one xorb each)
 * and, for each, the other files of the repository that use the same
 * chunks of that xorb.
 */
async function showTerms(conn, entry, entries) {
  const out = $("#repo-terms");
  out.dataset.state = "running";
  out.replaceChildren(el("p.muted", `Asking the hub how ${entry.path} is stored…`));
  try {
    const m = await xk();
    const others = entries.filter((e) => e.xetHash && e.path !== entry.path).slice(0, 200);
    const [terms, ...otherTerms] = await Promise.all([termsOf(m, conn, entry.xetHash), ...others.map((e) => termsOf(m, conn, e.xetHash))]);
    const shared = (t) => {
      const with_ = [];
      others.forEach((o, i) => {
        let n = 0;
        for (const u of otherTerms[i]) if (u.xorb === t.xorb) n += Math.max(0, Math.min(t.end, u.end) - Math.max(t.start, u.start));
        if (n) with_.push({ path: o.path, chunks: n });
      });
      return with_;
    };
    const chunks = terms.reduce((s, t) => s + t.end - t.start, 0);
    let sharedChunks = 0;
    const rows = terms.map((t, i) => {
      const w = shared(t);
      const most = w.reduce((s, x) => Math.max(s, x.chunks), 0);
      sharedChunks += Math.min(most, t.end - t.start);
      return el("tr.xf-term", { dataset: { xorb: t.xorb, shared: String(most) } },
        el("td.num", String(i)),
        el("td.xf-hash", hashCell(t.xorb, { title: `xorb ${t.xorb}` })),
        el("td.num", `${num(t.start)}–${num(t.end)}`),
        el("td.num", sbytes(t.bytes)),
        el("td.xf-shared", w.length ? w.map((x) => `${x.path} (${num(x.chunks)})`).join(", ") : el("span.muted", "—")));
    });
    const xorbs = new Set(terms.map((t) => t.xorb)).size;
    out.replaceChildren(
      el("h3.xf-terms-title", `How ${entry.path} is stored`),
      el("p.xf-terms-sum", `${num(terms.length)} term${terms.length === 1 ? "" : "s"} over ${num(xorbs)} xorb${xorbs === 1 ? "" : "s"}, ${num(chunks)} chunks; `,
        el("strong", `${num(sharedChunks)} of them`), " also used by other files of the repository (the hub's reconstruction; downloads check it)."),
      el("div.xf-table-wrap", el("table.xf-table.xf-terms-table",
        el("colgroup", ["n", "xorb", "chunks", "bytes", "shared"].map((c) => el("col.xf-col-t" + c))),
        el("thead", el("tr", el("th.num", "Term"), el("th", "Xorb"), el("th.num", "Chunks"), el("th.num", "Bytes"), el("th", "Shared with (chunks)"))),
        el("tbody", rows))));
    out.dataset.state = "done";
    out.scrollIntoView({ block: "nearest" });
  } catch (err) {
    out.dataset.state = "failed";
    const e = describeError(err);
    out.replaceChildren(el("div.error", { role: "alert" }, `Could not get the terms of ${entry.path} — ${err?.code ? err.code + ": " : ""}${e.msg}`));
  }
}

// ---- peek ------------------------------------------------------------------

// What Peek reads: the first bytes, and a safetensors header up to this size.
const PEEK_BYTES = 256;
const MAX_HEADER = 100 << 20;

/**
 * Shows a file's first bytes (hex and text) and, for a .safetensors file,
 * its header (tensor names, dtypes, shapes), read through xk.open: only
 * the chunks under those bytes are fetched, each checked.
 */
async function showPeek(conn, entry) {
  const out = $("#repo-peek");
  out.dataset.state = "running";
  out.replaceChildren(el("p.muted", `Opening ${entry.path}…`));
  try {
    const m = await xk();
    const f = await m.open({ path: entry.path }, conn);
    let read = 0;
    const bytesOf = async (blob) => { read += blob.size; return blob.bytes(); };
    const head = await bytesOf(f.slice(0, PEEK_BYTES));
    const parts = [el("h3.xf-terms-title", `Inside ${entry.path}`)];
    let header = null;
    if (/\.safetensors$/i.test(entry.path)) header = await safetensorsHeader(f, bytesOf);
    parts.push(el("p.xf-terms-sum.xf-peek-sum", `Read ${num(read)} bytes of the file's ${num(f.size)} (${sbytes(f.size)}), every chunk under them checked; the rest of the file was not downloaded.`));
    if (header) parts.push(header);
    parts.push(el("figure.xf-peek-fig",
      el("figcaption.muted", `The first ${num(head.length)} bytes`),
      el("pre.xf-peek-hex", { tabindex: "0", role: "region", "aria-label": `The first ${head.length} bytes of ${entry.path}` }, hexDump(head))));
    out.replaceChildren(...parts);
    out.dataset.state = "done";
    out.scrollIntoView({ block: "nearest" });
  } catch (err) {
    out.dataset.state = "failed";
    const e = describeError(err);
    out.replaceChildren(el("div.error", { role: "alert" }, `Could not read ${entry.path} — ${err?.code ? err.code + ": " : ""}${e.msg}`));
  }
}

/** Lines of 16 bytes: offset, hex, and the printable ASCII ("." for the rest). */
function hexDump(b) {
  const lines = [];
  for (let o = 0; o < b.length; o += 16) {
    const row = b.subarray(o, o + 16);
    const hex = [...row].map((x) => x.toString(16).padStart(2, "0")).join(" ").padEnd(47);
    const text = [...row].map((x) => (x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : ".")).join("");
    lines.push(`${o.toString(16).padStart(8, "0")}  ${hex}  ${text}`);
  }
  return lines.join("\n");
}

/**
 * Reads a safetensors header: an 8-byte little-endian length, then that
 * many bytes of JSON naming each tensor's dtype, shape and data offsets.
 * Returns the element that shows it; a header that does not follow the
 * format is an error naming the byte offset.
 */
async function safetensorsHeader(f, bytesOf) {
  if (f.size < 8) throw new Error(`not a safetensors file: ${f.size} bytes, the header length alone takes 8 (offset 0)`);
  const lenBytes = await bytesOf(f.slice(0, 8));
  const len = new DataView(lenBytes.buffer, lenBytes.byteOffset, 8).getBigUint64(0, true);
  if (len > BigInt(f.size - 8)) {
    throw new Error(`not a safetensors file: the header length at offset 0 says ${len} bytes, the file has ${f.size - 8} after it`);
  }
  if (len > BigInt(MAX_HEADER)) throw new Error(`the header length at offset 0 says ${len} bytes, more than the ${sbytes(MAX_HEADER)} this page reads`);
  const n = Number(len);
  let json;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(await bytesOf(f.slice(8, 8 + n))));
  } catch (err) {
    if (err?.code) throw err;
    throw new Error(`not a safetensors file: the header (offset 8, ${n} bytes) is not JSON: ${err.message}`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw new Error("not a safetensors file: the header (offset 8) is not a JSON object");
  const meta = json.__metadata__;
  const tensors = Object.entries(json).filter(([k]) => k !== "__metadata__");
  const SHOWN = 500;
  const dataStart = 8 + n;
  const rows = tensors.slice(0, SHOWN).map(([name, t]) => {
    const shape = Array.isArray(t?.shape) ? t.shape : null;
    const off = Array.isArray(t?.data_offsets) && t.data_offsets.length === 2 ? t.data_offsets : null;
    return el("tr.xf-tensor", { dataset: { name, dtype: String(t?.dtype ?? ""), shape: shape ? shape.join(",") : "" } },
      el("td.xf-tname", { title: name }, name),
      el("td", String(t?.dtype ?? "?")),
      el("td.num", shape ? `[${shape.join(", ")}]` : "?"),
      el("td.num", off ? sbytes(off[1] - off[0]) : "?"),
      el("td.num", off ? num(dataStart + off[0]) : "?"));
  });
  const total = tensors.reduce((s, [, t]) => s + (Array.isArray(t?.data_offsets) ? t.data_offsets[1] - t.data_offsets[0] : 0), 0);
  return el("div.xf-st", { dataset: { tensors: String(tensors.length), headerBytes: String(n) } },
    el("p.xf-terms-sum", el("strong", "safetensors"), `: ${num(tensors.length)} tensor${tensors.length === 1 ? "" : "s"}, ${sbytes(total)} of data; header of ${num(n)} bytes`,
      meta && typeof meta === "object" ? ` · metadata: ${Object.entries(meta).map(([k, v]) => `${k}=${v}`).join(", ")}` : ""),
    el("div.xf-table-wrap", el("table.xf-table.xf-st-table",
      el("colgroup", ["name", "dtype", "shape", "bytes", "at"].map((c) => el("col.xf-col-s" + c))),
      el("thead", el("tr", el("th", "Tensor"), el("th", "Dtype"), el("th.num", "Shape"), el("th.num", "Bytes"), el("th.num", "At byte"))),
      el("tbody", rows))),
    tensors.length > SHOWN ? el("p.muted", `…and ${num(tensors.length - SHOWN)} more.`) : null);
}
