// The boundary between JavaScript and Go is declared once, in
// wasm/exports.json. Go registers only what it declares and checks each
// call's arguments against it; this suite checks the rest against the same
// file: the calls the JavaScript wrapper makes (names, argument counts,
// sync or async, pool jobs), the objects it hands Go as interfaces, the
// public API in xetkit.d.ts built on each export, the error codes, and the
// names a running instance exports.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import ts from "typescript";
import { rawInstance, root } from "./helpers.mjs";

const wasmDir = join(root, "wasm");
const decl = JSON.parse(readFileSync(join(wasmDir, "exports", "exports.json"), "utf8"));
// The files that are not the wrapper: generated, or Go's own.
const generated = new Set(["go-runtime.js", "wasm_exec.js"]);

function parse(file, kind) {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, kind);
}

function walk(node, fn) {
  fn(node);
  ts.forEachChild(node, (c) => walk(c, fn));
}

// wrapperCalls finds every crossing into Go in the wrapper's sources:
// call(go, "name", …args) and callAsync(go, "name", …args) on this
// thread, pool jobs run("name", [args]) / runOn(i, "name", [args]).
export function wrapperCalls(sources) {
  const out = [];
  for (const [file, sf] of sources) {
    walk(sf, (n) => {
      if (!ts.isCallExpression(n)) return;
      const callee = n.expression;
      const fn = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : "";
      const where = `${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
      const a = n.arguments;
      if ((fn === "call" || fn === "callAsync") && ts.isIdentifier(callee) && a.length >= 2 && ts.isStringLiteral(a[1])) {
        const args = a.slice(2);
        assert.ok(!args.some(ts.isSpreadElement), `${where}: a call into Go spreads its arguments; pass each one`);
        out.push({ where, name: a[1].text, count: args.length, async: fn === "callAsync", job: false });
      } else if ((fn === "run" || fn === "runOn") && ts.isPropertyAccessExpression(callee)) {
        const at = fn === "run" ? 0 : 1;
        if (a.length > at + 1 && ts.isStringLiteral(a[at]) && ts.isArrayLiteralExpression(a[at + 1])) {
          out.push({ where, name: a[at].text, count: a[at + 1].elements.length, async: false, job: true });
        }
      }
    });
  }
  return out;
}

// classMembers gives the member names of each class declared in sources.
function classMembers(sources) {
  const out = new Map();
  for (const [, sf] of sources) {
    walk(sf, (n) => {
      if (ts.isClassDeclaration(n) && n.name) {
        out.set(n.name.text, n.members.filter((m) => m.name && !ts.isPrivateIdentifier(m.name)).map((m) => m.name.getText()));
      }
    });
  }
  return out;
}

// dtsReturns gives, for "Type.member", the return types (or property
// type) xetkit.d.ts declares, whitespace folded.
function dtsReturns(sf) {
  const out = new Map();
  const fold = (t) => t.getText().replace(/\s+/g, " ");
  walk(sf, (n) => {
    if (!(ts.isInterfaceDeclaration(n) || ts.isClassDeclaration(n)) || !n.name) return;
    for (const m of n.members) {
      if (!m.name || !m.type) continue;
      const key = `${n.name.text}.${m.name.getText()}`;
      if (!out.has(key)) out.set(key, []);
      out.get(key).push(fold(m.type));
    }
  });
  return out;
}

// dtsParams gives, for "Type.member" of a method, its parameters: name →
// the TypeNode of each signature (overloads included).
function dtsParams(sf) {
  const out = new Map();
  walk(sf, (n) => {
    if (!(ts.isInterfaceDeclaration(n) || ts.isClassDeclaration(n)) || !n.name) return;
    for (const m of n.members) {
      if (!m.name || !m.parameters) continue;
      const key = `${n.name.text}.${m.name.getText()}`;
      if (!out.has(key)) out.set(key, new Map());
      for (const p of m.parameters) {
        const name = p.name.getText();
        if (!out.get(key).has(name)) out.get(key).set(name, []);
        if (p.type) out.get(key).get(name).push(p.type);
      }
    }
  });
  return out;
}

// dtsProperties gives the properties (name → type text) an object type
// of the d.ts has: an interface with what it extends, a type literal,
// and every part of a union or intersection.
function dtsProperties(sf, type, out = new Map()) {
  if (ts.isUnionTypeNode(type) || ts.isIntersectionTypeNode(type)) {
    for (const t of type.types) dtsProperties(sf, t, out);
  } else if (ts.isTypeLiteralNode(type)) {
    for (const m of type.members) if (m.name && m.type) out.set(m.name.getText(), m.type.getText());
  } else if (ts.isTypeReferenceNode(type)) {
    interfaceProperties(sf, type.typeName.getText(), out);
  }
  return out;
}

function interfaceProperties(sf, name, out) {
  walk(sf, (n) => {
    if (!ts.isInterfaceDeclaration(n) || n.name.text !== name) return;
    for (const m of n.members) if (m.name && m.type) out.set(m.name.getText(), m.type.getText());
    for (const h of n.heritageClauses ?? []) for (const t of h.types) interfaceProperties(sf, t.expression.getText(), out);
  });
}

// optionsOf gives an export's options declarations with the option sets
// ("...") taken in.
export function optionsOf(decl, d) {
  const out = {};
  for (const [arg, keys] of Object.entries(d.options ?? {})) {
    const { "...": set, ...own } = keys;
    out[arg] = { ...(set ? decl.optionSets[set] : {}), ...own };
  }
  return out;
}

// tsKinds says which d.ts types an option's declared type agrees with.
const tsKinds = {
  string: /\bstring\b|"/, hash: /\bstring\b/, mode: /\bstring\b|"/, int: /\bnumber\b/, bool: /\bboolean\b/,
  signal: /\bAbortSignal\b/, object: /./,
};

// checkOptions compares the options an export declares with the public
// options of the d.ts members built on it: each must be there (or the
// public option it is made from, its "(from)"), of an agreeing type.
function checkOptions(decl, name, d, params, dts) {
  const problems = [];
  for (const [arg, keys] of Object.entries(optionsOf(decl, d))) {
    const types = Object.keys(d.api).flatMap((member) => params.get(member)?.get(arg) ?? []);
    if (types.length === 0) problems.push(`${name}: no member of xetkit.d.ts built on it takes ${arg}`);
    for (const t of types) {
      const props = dtsProperties(dts, t);
      for (const [key, declared] of Object.entries(keys)) {
        const [type, from] = declared.split(" ");
        const publicName = from ? from.slice(1, -1).split(".")[0] : key;
        if (publicName === arg) continue; // the argument itself, not one of its keys
        if (!props.has(publicName)) {
          problems.push(`${name}: xetkit.d.ts ${t.getText()} has no ${publicName} (exports.json ${arg}.${key})`);
        } else if (!from && !tsKinds[type.replace(/\?$/, "")].test(props.get(publicName))) {
          problems.push(`${name}: xetkit.d.ts says ${arg}.${publicName}: ${props.get(publicName)}, exports.json ${declared}`);
        }
      }
    }
  }
  return problems;
}

function dtsCodes(sf) {
  let codes = null;
  walk(sf, (n) => {
    if (ts.isTypeAliasDeclaration(n) && n.name.text === "XetkitErrorCode") {
      codes = n.type.types.map((t) => t.literal.text);
    }
  });
  return codes;
}

// check compares the wrapper's sources and the d.ts against decl; it
// returns the disagreements.
export function check(decl, sources, dts) {
  const problems = [];
  const calls = wrapperCalls(sources);
  const called = new Set(calls.map((c) => c.name));
  const params = dtsParams(dts);
  for (const c of calls) {
    const d = decl.exports[c.name];
    if (!d) {
      problems.push(`${c.where}: ${c.name} is not declared in exports.json`);
      continue;
    }
    const required = d.args.filter((a) => !a.endsWith("?")).length;
    if (c.count < required || c.count > d.args.length) {
      problems.push(`${c.where}: ${c.name} takes ${d.args.length} arguments (${d.args.join(", ")}), called with ${c.count}`);
    }
    if (c.job && d.async) problems.push(`${c.where}: ${c.name} is async, a worker's job must be a sync export`);
    if (!c.job && c.async !== Boolean(d.async)) {
      problems.push(`${c.where}: ${c.name} is ${d.async ? "async: callAsync" : "sync: call"} it`);
    }
  }
  for (const [name, d] of Object.entries(decl.exports)) {
    if (!d.test && !called.has(name)) problems.push(`${name} is declared but the wrapper never calls it`);
    for (const code of d.codes) if (!(code in decl.codes)) problems.push(`${name}: code ${code} is not in codes`);
    for (const a of d.args) {
      const type = a.split(": ")[1]?.replace(/\?$/, "");
      if (!(type in decl.argTypes)) problems.push(`${name}: argument ${a} has no declared type`);
    }
    if (d.events && !d.args.some((a) => a.startsWith("events: "))) problems.push(`${name}: events without an events argument`);
    problems.push(...checkOptions(decl, name, d, params, dts));
    const returns = dtsReturns(dts);
    for (const [member, type] of Object.entries(d.api)) {
      const got = returns.get(member);
      if (!got) problems.push(`${name}: xetkit.d.ts has no ${member}`);
      else if (!got.includes(type)) problems.push(`${name}: xetkit.d.ts says ${member}: ${got.join(" | ")}, exports.json ${type}`);
    }
  }
  const classes = classMembers(sources);
  for (const [iface, members] of Object.entries(decl.interfaces)) {
    const want = Object.keys(members).filter((k) => k !== "about").sort();
    const got = classes.get(iface);
    if (!got) problems.push(`no class ${iface} implements the ${iface} interface`);
    else if (JSON.stringify([...got].sort()) !== JSON.stringify(want)) {
      problems.push(`class ${iface} has ${[...got].sort().join(", ")}; exports.json declares ${want.join(", ")}`);
    }
  }
  const codes = dtsCodes(dts) ?? [];
  for (const code of Object.keys(decl.codes)) {
    if (!codes.includes(code)) problems.push(`xetkit.d.ts XetkitErrorCode lacks ${code}`);
  }
  return problems;
}

function wrapperSources() {
  return readdirSync(wasmDir)
    .filter((f) => f.endsWith(".js") && !generated.has(f))
    .map((f) => [f, parse(join(wasmDir, f), ts.ScriptKind.JS)]);
}

const dtsFile = () => parse(join(wasmDir, "xetkit.d.ts"), ts.ScriptKind.TS);

test("the wrapper and xetkit.d.ts agree with exports.json", () => {
  assert.deepEqual(check(decl, wrapperSources(), dtsFile()), []);
});

test("the check finds a disagreement", () => {
  // Each change below must be caught: a wrong argument count, a sync
  // export called async, an export nobody calls, a d.ts return type.
  const bad = structuredClone(decl);
  bad.exports.hashChunk.args.push("extra: bytes");
  bad.exports.kindOf.async = true;
  bad.exports.unused = { args: [], result: "void", codes: [], api: {} };
  bad.exports.hashKeyed.api["Hashes.keyed"] = "number";
  bad.interfaces.Offload.extra = "() => void";
  bad.exports.listFiles.options.options.bogus = "string?";
  bad.exports.processFile.options.options.xorbSize = "string?";
  const problems = check(bad, wrapperSources(), dtsFile()).join("\n");
  for (const want of [/hashChunk takes 2 arguments/, /kindOf is async/, /unused is declared but the wrapper never calls it/, /Hashes.keyed: string, exports.json number/, /class Offload has/,
    /listFiles: xetkit.d.ts ListFilesOptions has no bogus/, /processFile: xetkit.d.ts says options.xorbSize: number, exports.json string\?/]) {
    assert.match(problems, want);
  }
});

test("a running instance exports exactly what exports.json declares, in one convention", async () => {
  const api = await rawInstance("__xetkitExportsTest");
  assert.deepEqual(Object.keys(api).sort(), Object.keys(decl.exports).sort());
  // Every call answers {ok, value} or {ok: false, error}; a wrong argument
  // type is a TYPE error naming the argument, before any Go code runs.
  assert.deepEqual(api.shardFlags("chunk", 0), { ok: true, value: api.shardFlags("chunk", 0).value });
  const r = api.hashChunk("not bytes");
  assert.equal(r.ok, false);
  assert.equal(r.error.code, "TYPE");
  assert.match(r.error.message, /hashChunk: bytes must be a Uint8Array/);
  const p = await api.listFiles(5);
  assert.equal(p.ok, false);
  assert.equal(p.error.code, "TYPE");
  // An events object naming an event the export does not declare is refused.
  const e = await api.chunkStream(new Uint8Array(1), { onData: () => {} });
  assert.equal(e.ok, false);
  assert.match(e.error.message, /events.onData is not one of its events/);
  // Options objects are checked against their declared keys before any Go
  // code runs: an unknown key and a wrong type are TYPE errors, a required
  // key absent a VALUE error.
  const hub = { hub: "http://127.0.0.1:9", repo: "a/b" };
  for (const [options, code, message] of [
    [{ ...hub, bogus: 1 }, "TYPE", /listFiles: options.bogus is not one of its options \[concurrency hub path/],
    [{ ...hub, repo: 5 }, "TYPE", /listFiles: options.repo must be a string/],
    [{ ...hub, recursive: "yes" }, "TYPE", /listFiles: options.recursive must be a boolean/],
    [{ ...hub, retries: 1.5 }, "TYPE", /listFiles: options.retries must be an integer/],
    [{ hub: hub.hub }, "VALUE", /listFiles: options.repo is required/],
    [{ ...hub, concurrency: 99 }, "RANGE", /options.concurrency must be from 1 to 32/],
  ]) {
    const r = await api.listFiles(options);
    assert.equal(r.ok, false, JSON.stringify(options));
    assert.equal(r.error.code, code, r.error.message);
    assert.match(r.error.message, message);
  }
});
