import assert from "node:assert/strict";
import { test } from "node:test";
import { countTokens } from "../../sim/tokenizer.js";
import { buildMessages, extraHeaders } from "../workload/messages.js";
import { sharedPrefix as s } from "./shared-prefix.js";

const full = s.generate({ seed: 5, quick: false });

test("every request is interactive: a 2,048-token group system prompt and a 256-token question", () => {
  assert.ok(
    full.every(
      (r) => r.request_class === "interactive" && r.prefix_tokens === 2048 && r.input_tokens === 256,
    ),
  );
  assert.ok(full.every((r) => r.max_tokens >= 64 && r.max_tokens <= 128));
  const [system, question] = buildMessages(full[0]!);
  assert.ok(Math.abs(countTokens(system!.content) - 2048) <= 20);
  assert.ok(Math.abs(countTokens(question!.content) - 256) <= 8);
});

test("groups are drawn at random, each recurring about 16 times in a full run", () => {
  const perGroup = new Map<string, number>();
  for (const r of full) perGroup.set(r.prefix_group!, (perGroup.get(r.prefix_group!) ?? 0) + 1);
  assert.ok(perGroup.size > 370 && perGroup.size <= 384, `${perGroup.size} groups`);
  const mean = full.length / perGroup.size;
  assert.ok(mean > 13 && mean < 19, `${mean} requests per group`);
  const firstTen = full.slice(0, 10).map((r) => r.prefix_group);
  assert.ok(new Set(firstTen).size >= 8, "consecutive requests come from different groups");
});

test("a group's system prompt is byte-identical across its requests; the header names the group", () => {
  const group = full[0]!.prefix_group!;
  const same = full.filter((r) => r.prefix_group === group).slice(0, 4);
  assert.ok(same.length >= 2);
  const systems = new Set(same.map((r) => buildMessages(r)[0]!.content));
  assert.equal(systems.size, 1);
  assert.equal(extraHeaders(same[0]!)["X-Prefix-Group"], group);
});

test("quick draws from fewer groups so they still recur", () => {
  const quick = s.generate({ seed: 5, quick: true });
  const groups = new Set(quick.map((r) => r.prefix_group));
  assert.ok(quick.length / groups.size >= 5, `${quick.length} requests over ${groups.size} groups`);
});
