// `tokengate director`: usage and config errors refused with their exit status, the director run as a
// process that serves until SIGTERM, and `director explain` printing a running director's decision.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { RegionDirectorCore } from "../director/director-core.js";
import { startDirector } from "../director/director-service.js";
import { directorConfigOf, FakeRegion } from "../testing/fake-region.js";
import { runDirectorCommand } from "./director.js";

const dir = mkdtempSync(join(tmpdir(), "tokengate-director-"));
const running: { stop(): Promise<void> }[] = [];
after(async () => {
  for (const r of running.reverse()) await r.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const code = await runDirectorCommand(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

function configFile(name: string, spec: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `apiVersion: tokengate.dev/v1alpha1\nkind: RegionDirector\nmetadata: { name: d }\nspec:\n${spec}`,
  );
  return file;
}

describe("tokengate director: the command line", () => {
  it("prints its usage on --help, and refuses a bad command line with status 2", async () => {
    const help = await run(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.out, /^Usage: tokengate director --config <file>/);
    for (const [argv, problem] of [
      [[], "--config is required"],
      [["--config", "x.yaml", "--port", "abc"], '--port: expected an integer 0..65535, got "abc"'],
      [["explain", "--tenant", "t"], "explain needs --model <alias>"],
      [["explain", "--model", "m", "--director", "ftp://x"], "--director: expected the director's http://"],
    ] as const) {
      const r = await run([...argv]);
      assert.equal(r.code, 2, argv.join(" "));
      assert.ok(r.err.startsWith(`tokengate director: ${problem}`), r.err);
      assert.match(r.err, /Usage: tokengate director/);
    }
  });

  it("refuses an invalid config with status 1, printing every error", async () => {
    const file = configFile("bad.yaml", "  mode: sideways\n  regions:\n    - { name: EU }\n");
    const r = await run(["--config", file, "--log", "none"]);
    assert.equal(r.code, 1);
    const errors = r.err.split("\n").filter((l) => l.startsWith("error: "));
    assert.ok(errors.length >= 3, r.err);
    assert.ok(errors.some((e) => e.includes("mode")));
    assert.ok(errors.some((e) => e.includes("gatewayUrl")));
    assert.match(r.err, /not started/);
    assert.equal((await run(["--config", join(dir, "missing.yaml")])).code, 1);
  });

  it("runs as a process: serves until SIGTERM, then stops with status 0", { timeout: 30_000 }, async () => {
    const eu = await FakeRegion.start({ name: "eu" });
    running.push(eu);
    const file = configFile(
      "ok.yaml",
      `  listen: { host: 127.0.0.1, port: 0 }\n  regions:\n    - { name: eu, gatewayUrl: "${eu.url}" }\n` +
        "  polling: { intervalMs: 100, staleAfterMs: 2000, timeoutMs: 500 }\n",
    );
    const script = `import { runDirectorCommand } from ${JSON.stringify(new URL("./director.js", import.meta.url).href)};
process.exitCode = await runDirectorCommand(process.argv.slice(1));`;
    const child = spawn(
      process.execPath,
      ["--input-type=module", "-e", script, "--", "--config", file, "--log", "none"],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (c: Buffer) => {
        stderr += c.toString();
        const m = /listening on (http:\/\/\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    assert.equal((await (await fetch(`${url}/health`)).text()).trim(), "ok");
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    assert.equal(await exited, 0, stderr);
    assert.match(stderr, /tokengate director: stopped/);
  });
});

describe("tokengate director explain", () => {
  it("prints the region, the reason and each candidate's score terms or filter", async () => {
    const eu = await FakeRegion.start({ name: "eu", headroom: 0.8 });
    const us = await FakeRegion.start({ name: "us", headroom: 0.8 });
    running.push(eu, us);
    const config = directorConfigOf([eu, us], {
      latencyMs: { eu: { eu: 10, us: 150 } },
      residency: { "eu-only": ["eu"] },
    });
    const d = await startDirector({ config, core: new RegionDirectorCore(config), logDestination: "none" });
    running.push(d);
    const until = Date.now() + 10_000;
    while ((await fetch(`${d.url}/ready`)).status !== 200 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));

    const r = await run([
      "explain",
      "--tenant",
      "t",
      "--model",
      "m",
      "--caller-region",
      "eu",
      "--director",
      d.url,
    ]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.equal(lines[0], `region: eu (${eu.url})`);
    assert.match(lines[1]!, /^reason: home/);
    assert.equal(lines[2], "query: tenant t, model m, caller region eu, session t");
    assert.equal(lines[3], "candidates:");
    assert.match(
      lines[4]!,
      /^ {2}eu {2}score \d\.\d{3} {2}\(latency \d\.\d{3}, headroom 0\.800, errors \d\.\d{3}, cost \d\.\d{3}\)$/,
    );
    assert.match(lines[5]!, /^ {2}us {2}score /);

    const residency = await run(["explain", "--tenant", "eu-only", "--model", "m", "--director", d.url]);
    assert.equal(residency.code, 0);
    assert.match(residency.out, /^ {2}us {2}filtered: residency$/m);

    const refused = await run(["explain", "--model", "nope", "--director", d.url, "--json"]);
    assert.equal(refused.code, 1);
    const body = JSON.parse(refused.out);
    assert.equal(body.decision.kind, "refuse");
    assert.equal(body.decision.code, "model_unavailable");

    const closed = await FakeRegion.start({ name: "closed" });
    await closed.stop();
    const none = await run(["explain", "--model", "m", "--director", closed.url]);
    assert.equal(none.code, 1);
    assert.match(none.err, /no answer/);
  });
});
