import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pausesWithin, readPauseEvents } from "./router-pauses.js";

describe("router pauses", () => {
  it("counts the collections and stalls that began inside the measured windows only", () => {
    const dir = mkdtempSync(join(tmpdir(), "pauses-"));
    try {
      const file = join(dir, "p.jsonl");
      writeFileSync(
        file,
        [
          { kind: "gc", at: 100, ms: 1.5 },
          { kind: "gc", at: 150, ms: 6 },
          { kind: "stall", at: 160, ms: 32 },
          { kind: "gc", at: 400, ms: 9 },
          { kind: "stall", at: 900, ms: 12 },
        ]
          .map((e) => JSON.stringify(e))
          .join("\n") + "\n",
      );
      const events = readPauseEvents(file);
      assert.deepEqual(
        pausesWithin(events, [
          [90, 200],
          [850, 950],
        ]),
        {
          gc_count: 2,
          gc_ms: 7.5,
          gc_max_ms: 6,
          stalls: 2,
          stall_max_ms: 32,
        },
      );
      assert.deepEqual(pausesWithin(events, []), {
        gc_count: 0,
        gc_ms: 0,
        gc_max_ms: 0,
        stalls: 0,
        stall_max_ms: 0,
      });
      assert.deepEqual(readPauseEvents(join(dir, "none.jsonl")), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
