import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { crashSchedule } from "./soak-schedule.js";

const min = 60_000;

describe("soak crash schedule", () => {
  it("30 minutes: a crash every 3 minutes, rotating over the replicas, the last with time to recover", () => {
    const s = crashSchedule({ durationMs: 30 * min, replicas: 3, restartAfterMs: 5000 });
    assert.equal(s.length, 9);
    assert.deepEqual(
      s.map((c) => c.atMs / min),
      [3, 6, 9, 12, 15, 18, 21, 24, 27],
    );
    assert.deepEqual(
      s.map((c) => c.replica),
      [0, 1, 2, 0, 1, 2, 0, 1, 2],
    );
    assert.ok(s.at(-1)!.atMs + 5000 + 40_000 <= 30 * min);
  });

  it("10 minutes: one crash of each replica", () => {
    const s = crashSchedule({ durationMs: 10 * min, replicas: 3, restartAfterMs: 5000 });
    assert.deepEqual(s, [
      { atMs: 150_000, replica: 0 },
      { atMs: 300_000, replica: 1 },
      { atMs: 450_000, replica: 2 },
    ]);
  });

  it("short runs get at least one crash", () => {
    assert.deepEqual(crashSchedule({ durationMs: 2 * min, replicas: 3, restartAfterMs: 5000 }), [
      { atMs: 40_000, replica: 0 },
    ]);
    // Too short for the spacing and the recovery: one crash in the middle all the same.
    assert.deepEqual(crashSchedule({ durationMs: min, replicas: 3, restartAfterMs: 5000 }), [
      { atMs: 30_000, replica: 0 },
    ]);
  });

  it("takes an explicit spacing, and nothing for an empty run", () => {
    const s = crashSchedule({ durationMs: 10 * min, replicas: 2, restartAfterMs: 5000, everyMs: 2 * min });
    assert.deepEqual(
      s.map((c) => [c.atMs / min, c.replica]),
      [
        [2, 0],
        [4, 1],
        [6, 0],
        [8, 1],
      ],
    );
    assert.deepEqual(crashSchedule({ durationMs: 0, replicas: 3, restartAfterMs: 5000 }), []);
  });
});
