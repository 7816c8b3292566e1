import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
});
