// The request log of a `tokengate gateway` process across a rotation (mv, then SIGUSR2) and across
// crashes: no line lost, none written twice, none torn.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  CLI_MAIN,
  type CliEngine,
  CRASH_GATEWAY,
  chat,
  spawnGateway,
  startCliEngine,
} from "../testing/cli-gateway.js";

interface Line {
  event: string;
  ts: string;
  trace_id?: string;
}

function readLines(path: string): Line[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  if (text === "") return [];
  assert.ok(text.endsWith("\n"), `${path} ends with a whole line`);
  return text
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
}

const traces = (lines: Line[]) =>
  lines.filter((l) => l.event === "inference.completed").map((l) => l.trace_id!);

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("tokengate gateway's request log file", () => {
  let engine: CliEngine;
  let dir = "";
  before(async () => {
    engine = await startCliEngine();
    dir = mkdtempSync(join(tmpdir(), "tokengate-log-"));
  });
  after(async () => {
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("moves to a new file on SIGUSR2 after a mv: every line in one of the two, the old one first", async () => {
    const log = join(dir, "access.log");
    const gw = await spawnGateway(CLI_MAIN, ["gateway", "--config", engine.dir, "--log", log]);
    // Traffic never stops while the file is moved and the gateway signalled.
    const sent: string[] = [];
    const answered: string[] = [];
    let stop = false;
    let rotated = false;
    let afterRotation = 0;
    const client = async (c: number) => {
      for (let i = 0; !stop; i++) {
        const id = `rot-${c}-${i}`;
        sent.push(id);
        if ((await chat(gw.url, id)) === 200) answered.push(id);
        if (rotated) afterRotation++;
      }
    };
    const clients = [0, 1, 2].map(client);
    try {
      await until("traffic", () => answered.length >= 30);
      renameSync(log, `${log}.1`);
      gw.proc.kill("SIGUSR2");
      await until("the new file", () => existsSync(log));
      rotated = true;
      await until("traffic after the rotation", () => afterRotation >= 30);
    } finally {
      stop = true;
      await Promise.all(clients);
      gw.proc.kill("SIGTERM");
    }
    assert.deepEqual(await gw.exited, { code: 0, signal: null }, gw.output());

    const old = readLines(`${log}.1`);
    const fresh = readLines(log);
    assert.equal(fresh[0]?.event, "log.reopened", "the new file starts with the reopening");
    assert.equal(answered.length, sent.length, "every request was answered");
    const logged = [...traces(old), ...traces(fresh)];
    assert.equal(new Set(logged).size, logged.length, "no line twice");
    assert.deepEqual(new Set(logged), new Set(sent), "a line for every request");
    assert.ok(traces(old).length >= 30 && traces(fresh).length >= 30, `${old.length} + ${fresh.length}`);
    // Everything buffered before the signal went to the old file: its lines all come first.
    const lastOld = old
      .map((l) => l.ts)
      .sort()
      .at(-1)!;
    const firstNew = fresh.map((l) => l.ts).sort()[0]!;
    assert.ok(lastOld <= firstNew, `${lastOld} <= ${firstNew}`);
    assert.ok(
      fresh.some((l) => l.event === "gateway.drained"),
      "the drain's events in the new file",
    );
  });

  const crash = async (how: string, unhooked = false) => {
    const log = join(dir, `crash-${how}${unhooked ? "-unhooked" : ""}.log`);
    const n = 12;
    const gw = await spawnGateway(CRASH_GATEWAY, ["--config", engine.dir, "--log", log], {
      CRASH_AFTER_LINES: String(n),
      CRASH_HOW: how,
      ...(unhooked ? { CRASH_UNHOOKED: "1" } : {}),
    });
    const ids = Array.from({ length: n }, (_, i) => `${how}-${i}`);
    // Three at a time, so several lines wait in the buffer together.
    for (let i = 0; i < n; i += 3) await Promise.all(ids.slice(i, i + 3).map((id) => chat(gw.url, id)));
    const end = await gw.exited;
    return { end, logged: traces(readLines(log)), ids, output: gw.output() };
  };

  it("keeps every request's line when an uncaught exception ends the process", async () => {
    const { end, logged, ids, output } = await crash("throw");
    assert.deepEqual(end, { code: 1, signal: null }, "Node's own ending: status 1");
    assert.match(output, /crash-gateway: a test crash/, "and its report");
    assert.deepEqual(logged.sort(), ids.sort());
  });

  it("keeps every request's line when an unhandled rejection ends the process", async () => {
    const { end, logged, ids, output } = await crash("reject");
    assert.deepEqual(end, { code: 1, signal: null });
    assert.match(output, /crash-gateway: a test rejection/);
    assert.deepEqual(logged.sort(), ids.sort());
  });

  it("SIGHUP reloads the config and does not end the gateway; every request's line is kept", async () => {
    const { end, logged, ids, output } = await crash("sighup");
    assert.deepEqual(end, { code: 0, signal: null }, output);
    assert.doesNotMatch(output, /reload \(sighup\) refused/);
    assert.deepEqual(logged.sort(), ids.sort());
  });

  it("(the control) loses the last lines when the hooks are removed before the crash", async () => {
    const { end, logged, ids } = await crash("throw", true);
    assert.equal(end.code, 1);
    assert.ok(logged.length < ids.length, `${logged.length} of ${ids.length} lines without the hooks`);
  });
});
