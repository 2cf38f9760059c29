// The hub pages' one script (no WebAssembly): a file dropped anywhere
// opens in the shard viewer (handed over by the viewer's handoff.js,
// loaded only on a drop), the revision picker navigates, and the "use it"
// lines select themselves. Pages work without it.

const drop = document.getElementById("drop");
let depth = 0;
const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes("Files");
addEventListener("dragenter", (e) => { if (hasFiles(e)) { depth++; drop.hidden = false; } });
addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; drop.hidden = true; } });
addEventListener("dragover", (e) => { if (hasFiles(e)) e.preventDefault(); });
addEventListener("drop", async (e) => {
  if (!hasFiles(e)) return;
  // The add-files form takes its own drops.
  if (e.target.closest?.("input[type=file]")) return;
  e.preventDefault();
  depth = 0;
  drop.hidden = true;
  const { handOff } = await import("/viewer/handoff.js");
  await handOff([...e.dataTransfer.files]);
  location.href = "/viewer/#handoff";
});

for (const sel of document.querySelectorAll("select[data-nav]")) {
  sel.addEventListener("change", () => { location.href = sel.dataset.nav + encodeURIComponent(sel.value); });
}
for (const input of document.querySelectorAll("input.copy")) {
  input.addEventListener("focus", () => input.select());
}
