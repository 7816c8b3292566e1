// `tokengate config …` against a `tokengate gateway` child process, as an operator uses them: apply a
// new version from a folder, see it in current and history, diff two versions, roll back; and a gateway
// killed (SIGKILL) between writing the history and swapping the config comes back on the version written,
// with a history that agrees with itself.

import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ConfigHistory } from "../control/config-history.js";
import {
  CLI_MAIN,
  type CliEngine,
  type CliGateway,
  spawnGateway,
  startCliEngine,
} from "../testing/cli-gateway.js";
import { runConfigCommand } from "./config.js";

const TOKEN = "a-test-admin-token-0123456789";

/** Runs `tokengate config <args>` in this process against the gateway at `admin`. */
async function config(admin: string, tokenFile: string, ...args: string[]) {
  let out = "";
  let err = "";
  const code = await runConfigCommand(
    [...args, "--admin", admin, "--token-file", tokenFile, "--actor", "ops"],
    {
      out: (t) => (out += t),
      err: (t) => (err += t),
    },
  );
  return { code, out, err };
}

function adminUrlOf(gw: CliGateway): string {
  return /metrics at (http:\/\/\S+)\/metrics/.exec(gw.output())![1]!;
}

describe("tokengate config against a running gateway", () => {
  let engine: CliEngine;
  let work: string;
  let tokenFile: string;
  const children: CliGateway[] = [];
  before(async () => {
    engine = await startCliEngine();
    work = mkdtempSync(join(tmpdir(), "tokengate-config-cli-"));
    tokenFile = join(work, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
  });
  after(async () => {
    for (const c of children)
      if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGKILL");
    await engine.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** A copy of the engine's config folder as version `v` (and `maxQueueMs` as given). */
  function folder(v: string, maxQueueMs = 5000): string {
    const dir = join(work, v);
    cpSync(engine.dir, dir, { recursive: true });
    const f = join(dir, "config.yaml");
    writeFileSync(
      f,
      readFileSync(f, "utf8")
        .replace('"cli-test-1"', `"${v}"`)
        .replace("maxQueueMs: 5000", `maxQueueMs: ${maxQueueMs}`),
    );
    return dir;
  }

  async function start(dir: string, history: string, env: Record<string, string> = {}) {
    const gw = await spawnGateway(
      CLI_MAIN,
      ["gateway", "--config", dir, "--port", "0", "--log", "none", "--no-watch", "--history", history],
      { TOKENGATE_ADMIN_TOKEN: TOKEN, ...env },
    );
    children.push(gw);
    return gw;
  }

  it("applies, shows, diffs and rolls back; refuses a stale apply and a broken config", async () => {
    const history = join(work, "h1.db");
    const gw = await start(folder("v1"), history);
    const admin = adminUrlOf(gw);
    let r = await config(admin, tokenFile, "current");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^v1 {2}\(start by start at /);
    r = await config(admin, tokenFile, "apply", folder("v2", 6000), "--note", "longer queue");
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, "now running v2 (replaced v1)\n");
    r = await config(admin, tokenFile, "apply", folder("v3"), "--replaces", "v1");
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /refused \(config_conflict\): this change replaces version v1, but v2 is running now/,
    );
    const broken = folder("v4");
    writeFileSync(
      join(broken, "config.yaml"),
      readFileSync(join(broken, "config.yaml"), "utf8").replace("defaultPool: p", "defaultPool: nope"),
    );
    r = await config(admin, tokenFile, "apply", broken);
    assert.equal(r.code, 1);
    assert.match(r.err, /config\.yaml:\d+:\d+ spec\.modelAliases\.m\.defaultPool: /);
    assert.match(r.err, /refused \(config_invalid\)/);
    r = await config(admin, tokenFile, "diff", "v1", "v2");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^-.*maxQueueMs: 5000/m);
    assert.match(r.out, /^\+.*maxQueueMs: 6000/m);
    r = await config(admin, tokenFile, "rollback", "--to", "v1", "--note", "drill");
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, "now running v1 (replaced v2)\n");
    r = await config(admin, tokenFile, "history");
    assert.equal(r.code, 0, r.err);
    const rows = r.out.trim().split("\n");
    assert.equal(rows.length, 3);
    assert.match(rows[0]!, /rollback\s+v1\s+by ops\s+\(replaced v2\)\s+"drill"$/);
    assert.match(rows[1]!, /apply\s+v2\s+by ops\s+\(replaced v1\)\s+"longer queue"$/);
    assert.match(rows[2]!, /start\s+v1\s+by start$/);
    r = await config(admin, tokenFile, "rollback", "--to", "v9");
    assert.equal(r.code, 1);
    assert.match(r.err, /version_not_found/);
    const noToken = await runConfigCommand(
      ["current", "--admin", admin, "--token-file", join(work, "missing")],
      {
        out: () => {},
        err: () => {},
      },
    );
    assert.equal(noToken, 2, "no token: a usage error before anything is sent");
    gw.proc.kill("SIGTERM");
    assert.deepEqual(await gw.exited, { code: 0, signal: null });
  });

  it("reloads when its files change, and on SIGHUP; a broken edit changes nothing", async () => {
    const dir = folder("w1");
    const file = join(dir, "config.yaml");
    const text = readFileSync(file, "utf8");
    const watched = await spawnGateway(
      CLI_MAIN,
      ["gateway", "--config", dir, "--port", "0", "--log", "none", "--history", join(work, "h3.db")],
      { TOKENGATE_ADMIN_TOKEN: TOKEN },
    );
    children.push(watched);
    const admin = adminUrlOf(watched);
    const current = async () => (await config(admin, tokenFile, "current")).out.split(" ")[0];
    const until = async (v: string) => {
      for (const end = Date.now() + 5000; Date.now() < end; ) {
        if ((await current()) === v) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.fail(`never ${v}: ${watched.output()}`);
    };
    writeFileSync(file, text.replace('"w1"', '"w2"'));
    await until("w2");
    writeFileSync(file, text.replace('"w1"', '"w3"').replace("defaultPool: p", "defaultPool: nope"));
    for (
      const end = Date.now() + 5000;
      !/reload \(watch\) refused/.test(watched.output()) && Date.now() < end;
    )
      await new Promise((r) => setTimeout(r, 50));
    assert.match(watched.output(), /spec\.modelAliases\.m\.defaultPool/);
    assert.equal(await current(), "w2", "the broken edit changed nothing");
    watched.proc.kill("SIGTERM");
    await watched.exited;

    // Without the watch, an edit waits for SIGHUP.
    writeFileSync(file, text);
    const hup = await spawnGateway(
      CLI_MAIN,
      [
        "gateway",
        "--config",
        dir,
        "--port",
        "0",
        "--log",
        "none",
        "--no-watch",
        "--history",
        join(work, "h4.db"),
      ],
      { TOKENGATE_ADMIN_TOKEN: TOKEN },
    );
    children.push(hup);
    writeFileSync(file, text.replace('"w1"', '"w4"'));
    const hupAdmin = adminUrlOf(hup);
    const r = await config(hupAdmin, tokenFile, "current");
    await new Promise((res) => setTimeout(res, 600));
    assert.match(r.out, /^w1 /);
    assert.match((await config(hupAdmin, tokenFile, "current")).out, /^w1 /, "no watch: the edit waits");
    hup.proc.kill("SIGHUP");
    for (const end = Date.now() + 5000; Date.now() < end; ) {
      if ((await config(hupAdmin, tokenFile, "current")).out.startsWith("w4 ")) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.match((await config(hupAdmin, tokenFile, "current")).out, /^w4 {2}\(reload by sighup/);
    hup.proc.kill("SIGTERM");
    assert.deepEqual(await hup.exited, { code: 0, signal: null });
  });

  it("killed between writing the history and swapping the config, it restarts on the version written", async () => {
    const history = join(work, "h2.db");
    const v1 = folder("c1");
    const gw = await start(v1, history, { TOKENGATE_CRASH_POINT: "after-history" });
    const admin = adminUrlOf(gw);
    const r = await config(admin, tokenFile, "apply", folder("c2", 7000));
    assert.equal(r.code, 1, "the gateway died before it answered");
    assert.deepEqual(await gw.exited, { code: null, signal: "SIGKILL" });
    // Restarted from the same files (c1, which the history has seen): c2 was written, so c2 runs.
    const again = await start(v1, history);
    const cur = await config(adminUrlOf(again), tokenFile, "current");
    assert.equal(cur.code, 0, cur.err);
    assert.match(cur.out, /^c2 {2}\(apply by ops/);
    again.proc.kill("SIGTERM");
    await again.exited;
    const h = new ConfigHistory(history);
    assert.deepEqual(
      h.acts().map((a) => `${a.action} ${a.version}`),
      ["apply c2", "start c1"],
    );
    h.close();
  });
});
