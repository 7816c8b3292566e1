import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { RequestLog } from "./request-log.js";

describe("request log to a file", () => {
  const dir = mkdtempSync(join(tmpdir(), "tokengate-log-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("appends one JSON line per entry, in batches, all of them by close", async () => {
    const path = join(dir, "requests.log");
    const log = new RequestLog(path);
    for (let i = 0; i < 300; i++) log.event("test.line", { i });
    // 256 lines make a batch that leaves at once; the rest wait for the timer or close.
    assert.equal(readFileSync(path, "utf8").split("\n").length - 1, 256);
    await log.close();
    const lines = readFileSync(path, "utf8").trim().split("\n");
    assert.equal(lines.length, 300);
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { i: number }).i),
      Array.from({ length: 300 }, (_, i) => i),
    );
    const again = new RequestLog(path);
    again.event("test.line", { i: 300 });
    await again.close();
    assert.equal(readFileSync(path, "utf8").trim().split("\n").length, 301, "appends, never truncates");
  });

  it("a destination that fails loses lines, not the gateway", async () => {
    const log = new RequestLog("/dev/full");
    log.event("test.line", { i: 0 });
    await log.close();
  });

  it("reopen: after a move, the buffer goes to the old file and the next lines to a new one", async () => {
    const path = join(dir, "rotated.log");
    const log = new RequestLog(path);
    log.event("test.line", { i: 0 });
    log.event("test.line", { i: 1 }); // still buffered when the file is moved
    renameSync(path, `${path}.1`);
    assert.equal(log.reopen(), true);
    log.event("test.line", { i: 2 });
    await log.close();
    const read = (p: string) =>
      readFileSync(p, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { event: string; i?: number });
    assert.deepEqual(
      read(`${path}.1`).map((l) => l.i),
      [0, 1],
    );
    assert.deepEqual(
      read(path).map((l) => l.event),
      ["log.reopened", "test.line"],
    );
    assert.equal(log.reopen(), false, "not once closed");
  });

  it("reopen: when the path cannot be opened, lines keep going to the old file", async () => {
    const sub = join(dir, "gone");
    mkdirSync(sub);
    const path = join(sub, "a.log");
    const log = new RequestLog(path);
    renameSync(sub, `${sub}.moved`); // the folder is gone: the path cannot be created again
    assert.equal(log.reopen(), false);
    log.event("test.line", { i: 7 });
    await log.close();
    assert.match(readFileSync(join(`${sub}.moved`, "a.log"), "utf8"), /"i":7/);
  });

  it("reopen is a no-op for stdout, stderr and none; flushSync writes what is buffered at once", () => {
    for (const d of ["stdout", "stderr", "none"]) assert.equal(new RequestLog(d).reopen(), false);
    const path = join(dir, "sync.log");
    const log = new RequestLog(path);
    log.event("test.line", { i: 0 });
    assert.equal(readFileSync(path, "utf8"), "", "buffered");
    log.flushSync();
    assert.match(readFileSync(path, "utf8"), /"i":0/);
    void log.close();
  });
});
