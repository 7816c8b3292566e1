import assert from "node:assert/strict";
import { test } from "node:test";
import { isoTime } from "./iso-time.js";

test("isoTime writes what Date.prototype.toISOString writes", () => {
  const samples = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, Date.now(), 253402300799999, 951782400000];
  for (let i = 0; i < 2000; i++) samples.push(Math.floor(Math.random() * 4_102_444_800_000));
  // Within one second the cached prefix is reused; across seconds, in both directions, it is rebuilt.
  for (let ms = 1_764_500_000_990; ms < 1_764_500_001_020; ms++) samples.push(ms);
  samples.push(1_764_500_000_500);
  for (const ms of samples) assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms));
});

test("isoTime without an argument is now", () => {
  const before = Date.now();
  const t = Date.parse(isoTime());
  assert.ok(t >= before && t <= Date.now());
});
