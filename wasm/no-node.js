// "#node" outside Node (see package.json "imports"): empty, and never
// imported, since xetkit.js asks for "#node" only when it runs in Node.
export {};
