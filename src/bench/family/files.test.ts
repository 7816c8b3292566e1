import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadFleetFile } from "../../sim/fleet.js";
import { parseTraceLines } from "../trace-formats/trace.js";
import { FAMILY_INDEX_FILE, type FamilyIndex, writeFamily } from "./files.js";
import { generateFamily } from "./generate.js";

test("a family on disk: a native trace and a SimFleet file per workload, and family.json", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tokengate-family-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const family = generateFamily({ n: 3, seed: 4, quick: true });
  const files = writeFamily(join(dir, "fam"), family);
  assert.equal(files.index, join(dir, "fam", FAMILY_INDEX_FILE));
  assert.equal(readdirSync(join(dir, "fam")).length, 1 + 2 * family.length);

  const index = JSON.parse(readFileSync(files.index, "utf8")) as FamilyIndex;
  assert.deepEqual(
    index.workloads.map((w) => w.name),
    family.map((w) => w.name),
  );
  for (const [i, w] of family.entries()) {
    const entry = index.workloads[i]!;
    assert.deepEqual(entry.params, w.params);
    assert.deepEqual(entry.fleet, w.fleet);
    assert.equal(entry.requests, w.trace.length);
    assert.equal(files.traces[i], join(dir, "fam", entry.trace));
    const trace = parseTraceLines(readFileSync(files.traces[i]!, "utf8"), entry.trace);
    assert.deepEqual(
      trace.map((r) => [
        r.id,
        r.t_ms,
        r.tenant,
        r.input_tokens,
        r.prefix_group,
        r.prefix_tokens,
        r.max_tokens,
      ]),
      w.trace.map((r) => [
        r.id,
        r.t_ms,
        r.tenant,
        r.input_tokens,
        r.prefix_group,
        r.prefix_tokens,
        r.max_tokens,
      ]),
    );
    assert.deepEqual(loadFleetFile(join(dir, "fam", entry.fleetFile)), w.fleet);
  }
});

test("two workloads of one name cannot share a directory", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tokengate-family-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const [w] = generateFamily({ n: 1, seed: 4, quick: true });
  assert.throws(() => writeFamily(dir, [w!, w!]), /same name/);
});
