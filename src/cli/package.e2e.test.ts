// The package as npm publishes it: `npm pack` of this checkout (after the build), unpacked into a
// temporary node_modules beside only its declared dependencies, then run as a user would run it. Every
// module it ships must load from what it ships: a shipped file that imports a test fixture (left out of
// the package) or a package that is only a devDependency breaks here, not on a user's machine.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};

/**
 * Packages a shipped module may import without the package installing them: each only from the named
 * file, reached only on demand, and the command that needs it says what to install.
 */
const ON_DEMAND: Record<string, string> = { openai: "dist/bench/batch-day/batch-day-runs.js" };

/** Specifiers a compiled module imports: statements at the start of a line (tsc's output), and import("…"). */
function importsOf(source: string): string[] {
  const out: string[] = [];
  const statement = /^(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["'];?$|^import\s*["']([^"']+)["'];?$/gm;
  for (const m of source.matchAll(statement)) out.push((m[1] ?? m[2])!);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) out.push(m[1]!);
  return out;
}

/** The package name a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageOf(spec: string): string {
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

describe("the packed package", () => {
  let dir = "";
  let pkg = "";
  let files: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "tokengate-pack-"));
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    const packed = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    files = packed[0]!.files.map((f) => f.path);
    const modules = join(dir, "node_modules");
    pkg = join(modules, "tokengate");
    mkdirSync(pkg, { recursive: true });
    await run("tar", ["-xzf", join(dir, packed[0]!.filename), "-C", pkg, "--strip-components=1"]);
    // Only the declared dependencies, as `npm install tokengate` would give it (their own dependencies
    // resolve from where the links point).
    for (const name of Object.keys(manifest.dependencies)) {
      const link = join(modules, name);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(join(ROOT, "node_modules", name), link, "dir");
    }
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ships the build and the examples, and no test or test fixture", () => {
    assert.ok(files.includes("dist/cli/main.js"));
    assert.ok(files.some((f) => f.startsWith("examples/")));
    assert.deepEqual(
      files.filter((f) => f.includes(".test.") || f.startsWith("dist/testing/")),
      [],
    );
  });

  it("every shipped module imports only shipped files, Node's own modules and declared dependencies", () => {
    const builtins = new Set(builtinModules);
    const missing: string[] = [];
    for (const f of files.filter((p) => p.endsWith(".js"))) {
      const source = readFileSync(join(pkg, f), "utf8");
      for (const spec of importsOf(source)) {
        if (spec.startsWith(".")) {
          if (!existsSync(resolve(dirname(join(pkg, f)), spec))) missing.push(`${f} → ${spec}`);
        } else if (!spec.startsWith("node:") && !builtins.has(spec)) {
          const name = packageOf(spec);
          if (!(name in manifest.dependencies) && ON_DEMAND[name] !== f)
            missing.push(`${f} → ${spec} (not a dependency)`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it("runs from the package: --help, bench --list, a scenario in virtual time", async () => {
    const main = join(pkg, "dist", "cli", "main.js");
    const help = await run(process.execPath, [main, "--help"], { cwd: dir });
    assert.match(help.stdout, /tokengate/);
    const list = await run(process.execPath, [main, "bench", "--list"], { cwd: dir });
    assert.match(list.stdout, /mixed-lengths/);
    const out = join(dir, "out");
    await run(process.execPath, [main, "bench", "mixed-lengths", "--virtual", "--quick", "--out", out], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    });
    assert.match(readFileSync(join(out, "virtual.md"), "utf8"), /tokengate/);
  });

  it("a bench that needs a package the install leaves out says which, and exits 1", async () => {
    const main = join(pkg, "dist", "cli", "main.js");
    const r = await run(process.execPath, [main, "bench", "batch-day", "--quick"], { cwd: dir }).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    assert.ok(r, "bench batch-day ran without the openai package");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /npm install openai/);
  });
});
