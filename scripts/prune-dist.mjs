#!/usr/bin/env node
// After `tsc`: removes what dist/ still holds of source files that are gone (tsc never deletes). A
// module moved or deleted in src/ would otherwise keep running as a stale test, or ship in the package.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const DIST = "dist";
const SRC = "src";
let removed = 0;
function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      walk(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    const m = /^(.*)\.js(\.map)?$/.exec(relative(DIST, path));
    if (!m) continue;
    const stem = join(SRC, m[1]);
    if (![".ts", ".mts", ".js"].some((ext) => existsSync(stem + ext))) {
      rmSync(path);
      removed++;
    }
  }
}
if (existsSync(DIST)) walk(DIST);
if (removed > 0) console.log(`prune-dist: removed ${removed} file(s) of sources that are gone`);
