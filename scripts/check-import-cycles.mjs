#!/usr/bin/env node
// Fails when src/ has an import cycle, type-only imports included: shared vocabulary (errors, config
// types) sits low in the graph, and the request path's stages import only downwards.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith(".ts") && !p.endsWith(".test.ts")) files.push(p);
  }
})("src");

const graph = new Map();
for (const f of files) {
  const deps = [];
  for (const m of readFileSync(f, "utf8").matchAll(/from\s+"(\.[^"]+)\.js"/g)) {
    deps.push(relative(".", resolve(dirname(f), `${m[1]}.ts`)));
  }
  graph.set(f, deps);
}

// Tarjan's strongly connected components; any with more than one file is a cycle.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
let next = 0;
function visit(v) {
  index.set(v, next);
  low.set(v, next++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  }
}
for (const v of graph.keys()) if (!index.has(v)) visit(v);

if (cycles.length > 0) {
  for (const c of cycles) console.error(`import cycle: ${c.join(" ↔ ")}`);
  process.exit(1);
}
console.log(`no import cycles among ${files.length} files`);
