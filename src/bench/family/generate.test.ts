import assert from "node:assert/strict";
import { test } from "node:test";
import { getProfile } from "../../sim/profiles.js";
import { formatTrace, parseTraceLines, type TraceRequest } from "../trace-formats/trace.js";
import { usableContext } from "./capacity.js";
import { type FamilyWorkload, generateFamily, generateWorkload } from "./generate.js";
import { RANGES } from "./params.js";

const SEED = 1;
const family = generateFamily({ n: 30, seed: SEED });
const quick = generateFamily({ n: 30, seed: SEED, quick: true });

const promptOf = (r: TraceRequest) => (r.input_tokens ?? 0) + (r.prefix_tokens ?? 0);

/** Prefill capacity recomputed from the profile's numbers: a full chunk per step of β0 + β1·chunk. */
function capacityOf(w: FamilyWorkload): number {
  const p = getProfile(w.params.profile);
  const g = w.fleet.groups[0]!;
  assert.equal(w.fleet.groups.length, 1);
  return (g.replicas * (p.maxNumBatchedTokens * 1e6)) / (p.beta0Us + p.beta1Us * p.maxNumBatchedTokens);
}

/**
 * The load some requests offer over `seconds`: prompt tokens per second over the prefill capacity, or
 * requests per second over what the engines' API-server stage takes (apiServerUs each, one at a time),
 * whichever is higher — the bound that binds first.
 */
function boundLoad(w: FamilyWorkload, reqs: readonly TraceRequest[], seconds: number): number {
  const p = getProfile(w.params.profile);
  const tokens = reqs.reduce((a, r) => a + promptOf(r), 0) / seconds / capacityOf(w);
  const requests = reqs.length / seconds / ((w.fleet.groups[0]!.replicas * 1e6) / p.apiServerUs);
  return Math.max(tokens, requests);
}

/** The steady traffic's load over the whole run. */
function offeredLoad(w: FamilyWorkload, only: (r: TraceRequest) => boolean = () => true): number {
  return boundLoad(w, w.trace.filter(only), w.params.durationS);
}

/** The steady load plus each burst's own load, spread over the run (as params.meanLoad is made). */
function offeredMeanLoad(w: FamilyWorkload): number {
  const tag = w.name.split("-")[0]!;
  let load = offeredLoad(w, (r) => r.task === "steady");
  for (const [j, b] of w.params.bursts.entries()) {
    const mine = w.trace.filter((r) => r.id.startsWith(`${tag}-b${j + 1}-`));
    if (mine.length > 0) load += (boundLoad(w, mine, b.lengthS) * b.lengthS) / w.params.durationS;
  }
  return load;
}

const within = (actual: number, expected: number, tolerance: number) =>
  Math.abs(actual / expected - 1) <= tolerance;

test("the same seed gives the same family; another seed another", () => {
  const a = generateFamily({ n: 4, seed: 7, quick: true });
  assert.deepEqual(generateFamily({ n: 4, seed: 7, quick: true }), a);
  const b = generateFamily({ n: 4, seed: 8, quick: true });
  assert.notDeepEqual(b, a);
  for (let i = 0; i < 4; i++) assert.notDeepEqual(b[i]!.trace, a[i]!.trace, `workload ${i}`);
});

test("workload i does not depend on n: a family of 5 is the first 5 of a family of 30", () => {
  assert.deepEqual(generateFamily({ n: 5, seed: SEED }), family.slice(0, 5));
  assert.deepEqual(generateWorkload({ seed: SEED, index: 12 }), family[12]);
  assert.deepEqual(generateFamily({ n: 5, seed: SEED, quick: true }), quick.slice(0, 5));
  assert.deepEqual(generateFamily({ n: 0, seed: SEED }), []);
  assert.throws(() => generateFamily({ n: -1, seed: SEED }), /n must be/);
});

test("every trace is sorted, inside its duration, with unique ids and the trace format's fields", () => {
  for (const w of [...family, ...quick]) {
    const t = w.trace;
    assert.ok(t.length > 0, w.name);
    for (let i = 1; i < t.length; i++) assert.ok(t[i - 1]!.t_ms <= t[i]!.t_ms, `${w.name}: unsorted at ${i}`);
    assert.ok(t[0]!.t_ms >= 0 && t.at(-1)!.t_ms < w.params.durationS * 1000, w.name);
    assert.equal(new Set(t.map((r) => r.id)).size, t.length, `${w.name}: duplicate ids`);
    const tenants = new Set(w.params.tenants.map((x) => x.name));
    for (const r of t) {
      assert.ok(Number.isInteger(r.t_ms) && Number.isInteger(r.input_tokens) && r.input_tokens! >= 1);
      assert.ok(Number.isInteger(r.max_tokens) && r.max_tokens >= 1);
      assert.ok(tenants.has(r.tenant), `${w.name}: tenant ${r.tenant}`);
      assert.equal(r.prefix_group === undefined, r.prefix_tokens === undefined);
      assert.equal(r.request_class, promptOf(r) > 8192 ? "long" : "interactive");
      assert.ok(r.stream && r.lang === "en");
    }
  }
});

test("a trace survives the native format: formatTrace then parseTraceLines gives it back", () => {
  for (const w of quick.slice(0, 6)) {
    const text = formatTrace(w.trace);
    assert.equal(formatTrace(parseTraceLines(text, w.name)), text);
  }
});

test("every request fits its fleet's context window, with room for the replay's template", () => {
  for (const w of [...family, ...quick]) {
    const window = getProfile(w.params.profile).maxModelLen;
    assert.equal(w.params.contextWindow, window);
    const worst = Math.max(...w.trace.map((r) => promptOf(r) + r.max_tokens));
    assert.ok(worst <= usableContext(window) && usableContext(window) < window, `${w.name}: ${worst}`);
  }
});

test("the load a workload says is what its arrivals offer, within 15% (steady traffic, and with bursts)", () => {
  for (const w of family) {
    const steady = offeredLoad(w, (r) => r.task === "steady");
    assert.ok(within(steady, w.params.steadyLoad, 0.15), `${w.name}: offers ${steady.toFixed(3)}`);
    assert.ok(within(w.params.meanLoad, w.params.load, 0.001), `${w.name}: the load is the run's mean`);
    const all = offeredMeanLoad(w);
    assert.ok(within(all, w.params.load, 0.15), `${w.name}: offers ${all.toFixed(3)} with bursts`);
    const tag = w.name.split("-")[0]!;
    for (const [j, b] of w.params.bursts.entries()) {
      const mine = w.trace.filter((r) => r.id.startsWith(`${tag}-b${j + 1}-`));
      assert.equal(mine.length, b.requests);
      assert.ok(Math.abs(b.requests - b.rate * b.lengthS) <= 1, `${w.name} burst ${j + 1}: ${b.requests}`);
      assert.ok(
        mine.every((r) => r.tenant === b.tenant && r.task === "burst" && r.prefix_group === undefined),
      );
      assert.ok(
        mine.every((r) => r.t_ms >= Math.floor(b.startS * 1000) && r.t_ms < (b.startS + b.lengthS) * 1000),
      );
      // A burst of a few requests is off by its rounding; the others must offer their size.
      if (b.requests < 30) continue;
      assert.ok(
        within(boundLoad(w, mine, b.lengthS), b.size * w.params.steadyLoad, 0.15),
        `${w.name} burst ${j + 1}`,
      );
    }
  }
});

test("quick scales each workload to ~20 s keeping its shape and its load within 15%", () => {
  for (const [i, w] of quick.entries()) {
    const full = family[i]!;
    assert.equal(w.name, full.name);
    assert.equal(w.params.durationS, RANGES.quickDurationS);
    assert.equal(w.params.quick, true);
    assert.deepEqual(w.fleet, full.fleet);
    // The steady rate may differ: a quick run's bursts are at least 2 s, a larger share of 20 s.
    for (const k of ["load", "prompt", "output", "tenants", "prefix", "fullDurationS"] as const) {
      assert.deepEqual(w.params[k], full.params[k], `${w.name}: ${k}`);
    }
    assert.equal(w.params.bursts.length, full.params.bursts.length);
    const steady = offeredLoad(w, (r) => r.task === "steady");
    assert.ok(within(steady, w.params.steadyLoad, 0.15), `${w.name}: quick offers ${steady.toFixed(3)}`);
    assert.ok(within(offeredMeanLoad(w), w.params.load, 0.15), `${w.name}: quick, with bursts`);
  }
});

test("drawn parameters stay in their ranges and are plain JSON", () => {
  for (const w of family) {
    const p = w.params;
    assert.deepEqual(JSON.parse(JSON.stringify(p)), p);
    assert.ok(p.engines >= 2 && p.engines <= 8 && w.fleet.groups[0]!.replicas === p.engines);
    assert.ok(p.profile === "h100-llama8b" || p.profile === "a100-llama8b");
    assert.ok(p.load >= 0.3 && p.load <= 1.2);
    assert.ok(p.durationS >= 60 && p.durationS <= 180 && p.durationS === p.fullDurationS);
    assert.ok(p.tenants.length >= 1 && p.tenants.length <= 6);
    assert.ok(Math.abs(p.tenants.reduce((a, t) => a + t.share, 0) - 1) < 0.01);
    assert.ok(p.bursts.length <= 3);
    for (const b of p.bursts) {
      assert.ok(b.lengthS >= 5 && b.lengthS <= 30 && b.size >= 0.5 && b.size <= 3);
      assert.ok(b.startS >= 0 && b.startS + b.lengthS <= p.durationS);
    }
    if (p.prefix) {
      assert.ok(p.prefix.fraction >= 0.1 && p.prefix.fraction <= 0.9);
      assert.ok(p.prefix.groups.length >= 1 && p.prefix.groups.length <= 20);
      assert.ok(p.prefix.groups.every((g) => g.tokens >= 200 && g.tokens <= 4000));
      const grouped = w.trace.filter((r) => r.task === "steady" && r.prefix_group !== undefined).length;
      const steady = w.trace.filter((r) => r.task === "steady").length;
      assert.ok(Math.abs(grouped / steady - p.prefix.fraction) < 0.01, `${w.name}: ${grouped}/${steady}`);
    } else {
      assert.ok(w.trace.every((r) => r.prefix_group === undefined));
    }
    assert.ok(w.trace.every((r) => r.max_tokens >= p.output.min && r.max_tokens <= p.output.max));
    assert.ok(p.output.max <= 2048);
    const m =
      /^f\d{2,}-load(\d\.\d\d)-(light|heavy|bimodal)-(\d)bursts?-(\d)tenants?-(noprefix|prefix\d+)-(\d)x(h100|a100)-out(short|medium|longtailed)$/.exec(
        w.name,
      );
    assert.ok(m, w.name);
    assert.equal(Number(m[1]), p.load);
    assert.equal(m[2], p.prompt.kind);
    assert.equal(Number(m[3]), p.bursts.length);
    assert.equal(Number(m[4]), p.tenants.length);
    assert.equal(m[5], p.prefix ? `prefix${Math.round(p.prefix.fraction * 100)}` : "noprefix");
    assert.equal(Number(m[6]), p.engines);
  }
  assert.equal(new Set(family.map((w) => w.name)).size, family.length);
});

test("a family of 30 covers its ranges", () => {
  const ps = family.map((w) => w.params);
  assert.ok(ps.some((p) => p.bursts.length > 0) && ps.some((p) => p.bursts.length === 0), "bursts and none");
  assert.ok(ps.some((p) => p.prefix) && ps.some((p) => !p.prefix), "prefix sharing and none");
  assert.ok(new Set(ps.map((p) => p.tenants.length)).size > 1, "tenant counts");
  assert.ok(ps.some((p) => p.load < 0.6) && ps.some((p) => p.load > 1.0), "loads below 0.6 and above 1.0");
  assert.deepEqual(new Set(ps.map((p) => p.prompt.kind)), new Set(["light", "heavy", "bimodal"]));
  assert.deepEqual(new Set(ps.map((p) => p.output.kind)), new Set(["short", "medium", "long-tailed"]));
  assert.deepEqual(new Set(ps.map((p) => p.profile)), new Set(["h100-llama8b", "a100-llama8b"]));
  assert.ok(new Set(ps.map((p) => p.engines)).size >= 4, "engine counts");
  const longest = family.reduce((a, w) => w.trace.reduce((b, r) => Math.max(b, r.input_tokens!), a), 0);
  assert.ok(longest > 10_000, `the heavy tails reach past 10k tokens (longest ${longest})`);
});
