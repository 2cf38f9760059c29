// Checks a shard's rules off the page's thread, so a huge shard's first
// screen stays responsive while its findings are computed. Receives the
// shard bytes, answers {findings} or {error: {message, offset}}.

import { load } from "./wasm/xetkit.js";

self.onmessage = async (e) => {
  try {
    const xk = await load({ workers: 0 });
    self.postMessage({ findings: await xk.validateShard(e.data.bytes, { upload: !!e.data.upload }) });
  } catch (err) {
    self.postMessage({ error: { message: err && err.message ? err.message : String(err), offset: err && err.offset } });
  }
};
