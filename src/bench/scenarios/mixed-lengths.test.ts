import assert from "node:assert/strict";
import { test } from "node:test";
import { mixedLengths as s } from "./mixed-lengths.js";

const full = s.generate({ seed: 13, quick: false });
const sorted = (v: number[]) => [...v].sort((a, b) => a - b);

test("input lengths are heavy-tailed around a median of ~600, capped at 16k", () => {
  const input = sorted(full.map((r) => r.input_tokens!));
  const median = input[Math.floor(input.length / 2)]!;
  assert.ok(Math.abs(median - 600) < 60, `median ${median}`);
  assert.ok(input.at(-1)! <= 16_000 && input.at(-1)! > 8192, `max ${input.at(-1)}`);
  assert.ok(input[Math.floor(input.length * 0.99)]! > 5 * median, "p99 far above the median");
});

test("output lengths centre on ~150, capped at 1,500", () => {
  const out = sorted(full.map((r) => r.max_tokens));
  const median = out[Math.floor(out.length / 2)]!;
  assert.ok(Math.abs(median - 150) < 20, `median ${median}`);
  assert.ok(out.at(-1)! <= 1500 && out.at(-1)! > 600);
});

test("no request shares a prefix; only inputs past 8,192 tokens are class long", () => {
  assert.ok(full.every((r) => r.prefix_group === undefined && r.prefix_tokens === undefined));
  assert.ok(full.every((r) => (r.request_class === "long") === r.input_tokens! > 8192));
  assert.ok(full.some((r) => r.request_class === "long"));
});
