// Pins the config history and the changes made through it, on a real SQLite file: a version and the act
// that puts it in force are written together; an apply names the version it replaces; a config that
// fails validation changes nothing and reports every error; a rollback puts a stored version back; and
// at start the history decides what runs.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { GatewayConfigSet } from "../config/config-set.js";
import { ConfigControl } from "./config-control.js";
import { ConfigHistory } from "./config-history.js";
import { diffConfigs } from "./text-diff.js";

const EXAMPLE = "examples/support-summary";
const R3 = "support-summary-2026-06-15-r3";
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A copy of the example config in a folder of its own, and a history file beside it. */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), "tokengate-control-"));
  dirs.push(dir);
  const conf = join(dir, "conf");
  const files: Record<string, string> = {};
  for (const f of ["gateway.yaml", "pools.yaml", "route.yaml"]) {
    files[join(conf, f)] = readFileSync(join(EXAMPLE, f), "utf8");
  }
  mkdirSync(conf);
  for (const [p, t] of Object.entries(files)) writeFileSync(p, t);
  return { dir, conf, files, db: join(dir, "history.db") };
}

/** `files` with the route's version renamed (and, optionally, one more edit). */
function version(files: Record<string, string>, v: string, edit: (t: string) => string = (t) => t) {
  const out: Record<string, string> = {};
  for (const [p, t] of Object.entries(files)) out[p] = p.endsWith("route.yaml") ? edit(t.replace(R3, v)) : t;
  return out;
}

/** Stands in for the gateway: records what was swapped in. */
class Target {
  swapped: string[] = [];
  constructor(public config: GatewayConfigSet) {}
  reload(config: GatewayConfigSet): void {
    this.config = config;
    this.swapped.push(config.version);
  }
}

async function started(w: ReturnType<typeof workspace>) {
  const history = new ConfigHistory(w.db);
  const control = new ConfigControl(history, w.conf, {
    env: { TOKENGATE_UPSTREAM_SECRET: "a-test-secret-of-32-characters!!" },
  });
  const first = await control.initial();
  assert.ok(first.ok, JSON.stringify(first));
  const target = new Target(first.config);
  control.attach(target);
  return { history, control, target };
}

describe("config history and changes", () => {
  it("records the start, applies a new version naming the one it replaces, and refuses a stale one", async () => {
    const w = workspace();
    const { history, control, target } = await started(w);
    assert.equal(history.current()?.version, R3);
    assert.equal(history.current()?.action, "start");
    const r4 = version(w.files, "r4");
    const applied = await control.apply({ files: r4, replaces: R3, actor: "alice", action: "apply" });
    assert.ok(applied.ok && !applied.unchanged);
    assert.deepEqual(target.swapped, ["r4"]);
    assert.equal(applied.act?.replaced, R3);
    // Bob read r3 before Alice's apply and applies his r5 "replacing r3".
    const bob = await control.apply({
      files: version(w.files, "r5"),
      replaces: R3,
      actor: "bob",
      action: "apply",
    });
    assert.ok(!bob.ok);
    assert.equal(bob.status, 409);
    assert.equal(bob.code, "config_conflict");
    assert.equal(bob.current, "r4");
    assert.deepEqual(target.swapped, ["r4"], "nothing changed");
    assert.deepEqual(
      history.acts().map((a) => [a.version, a.action, a.actor]),
      [
        ["r4", "apply", "alice"],
        [R3, "start", "start"],
      ],
    );
    history.close();
  });

  it("a config that fails validation changes nothing and reports every error with file, line and path", async () => {
    const w = workspace();
    const { history, control, target } = await started(w);
    const bad = version(w.files, "r4", (t) => t.replace("routeTo: summary-online", "routeTo: no-such-pool"));
    const res = await control.apply({ files: bad, replaces: R3, actor: "a", action: "apply" });
    assert.ok(!res.ok);
    assert.equal(res.status, 422);
    assert.equal(res.code, "config_invalid");
    assert.ok((res.errors?.length ?? 0) >= 1);
    const e = res.errors![0]!;
    assert.match(e.file, /route\.yaml$/);
    assert.ok(e.line > 0);
    assert.match(e.path, /routeTo/);
    assert.deepEqual(target.swapped, []);
    assert.equal(history.acts().length, 1, "nothing written");
    assert.equal(history.version("r4"), null);
    history.close();
  });

  it("a version names one content: the same name with other content is refused, the same content is a no-op", async () => {
    const w = workspace();
    const { history, control, target } = await started(w);
    const same = await control.apply({ files: w.files, replaces: R3, actor: "a", action: "apply" });
    assert.ok(same.ok && same.unchanged);
    const edited = version(w.files, R3, (t) => t.replace("maxQueueMs: 800", "maxQueueMs: 900"));
    const res = await control.apply({ files: edited, replaces: R3, actor: "a", action: "apply" });
    assert.ok(!res.ok);
    assert.equal(res.code, "version_exists");
    assert.deepEqual(target.swapped, []);
    history.close();
  });

  it("rolls back to a stored version, and diffs two versions file by file", async () => {
    const w = workspace();
    const { history, control, target } = await started(w);
    const r4 = version(w.files, "r4", (t) => t.replace("maxQueueMs: 800", "maxQueueMs: 900"));
    assert.ok((await control.apply({ files: r4, replaces: R3, actor: "a", action: "apply" })).ok);
    const back = await control.rollback(R3, "oncall", "r4", "r4 hurt live TTFT");
    assert.ok(back.ok);
    assert.deepEqual(target.swapped, ["r4", R3]);
    assert.equal(history.current()?.action, "rollback");
    assert.equal(history.current()?.note, "r4 hurt live TTFT");
    const missing = await control.rollback("r9", "oncall", null);
    assert.ok(!missing.ok && missing.status === 404 && missing.code === "version_not_found");
    const diff = diffConfigs(history.version(R3)!.files, history.version("r4")!.files);
    assert.match(diff, /^--- a\/.*route\.yaml$/m);
    assert.match(diff, /^-.*support-summary-2026-06-15-r3/m);
    assert.match(diff, /^\+.*"r4"/m);
    assert.match(diff, /^-.*maxQueueMs: 800$/m);
    assert.match(diff, /^\+.*maxQueueMs: 900$/m);
    assert.equal(diffConfigs(r4, r4), "");
    history.close();
  });

  it("at start: new files win, otherwise the history's version survives a restart", async () => {
    const w = workspace();
    const one = await started(w);
    const r4 = version(w.files, "r4");
    assert.ok((await one.control.apply({ files: r4, replaces: R3, actor: "a", action: "apply" })).ok);
    one.history.close();
    // Restarted from the same files (still r3, which the history has seen): r4 keeps running.
    const two = await started(w);
    assert.equal(two.target.config.version, "r4");
    two.history.close();
    // The files now carry a version the history has never seen: they are new, and run.
    for (const [p, t] of Object.entries(version(w.files, "r6"))) writeFileSync(p, t);
    const three = await started(w);
    assert.equal(three.target.config.version, "r6");
    assert.equal(three.history.current()?.replaced, "r4");
    three.history.close();
  });

  it("reloads from its files, and reports a file it cannot read", async () => {
    const w = workspace();
    const { history, control, target } = await started(w);
    const unchanged = await control.reloadFromSource("sighup");
    assert.ok(unchanged.ok && unchanged.unchanged);
    for (const [p, t] of Object.entries(version(w.files, "r7"))) writeFileSync(p, t);
    const res = await control.reloadFromSource("sighup");
    assert.ok(res.ok && !res.unchanged);
    assert.deepEqual(target.swapped, ["r7"]);
    rmSync(w.conf, { recursive: true });
    const gone = await control.reloadFromSource("sighup");
    assert.ok(!gone.ok && gone.code === "config_invalid");
    assert.match(gone.errors![0]!.message, /cannot read/);
    assert.equal(target.config.version, "r7");
    history.close();
  });
});
