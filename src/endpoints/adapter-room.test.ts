// Pins making room for an adapter that has no slot: the engine and adapter chosen to give way, the
// filter that keeps that adapter's new requests off the engine, and the reservation's end.

import assert from "node:assert/strict";
import { it } from "node:test";
import { loraAvailableFilter } from "../picker/filters/endpoint-filters.js";
import { pickRequest } from "../testing/fake-endpoint.js";
import { endpoint } from "../testing/test-endpoint.js";
import { isHot, makeRoomFor, RESERVE_MS } from "./adapter-room.js";

function engine(name: string, running: string[]) {
  const ep = endpoint(name);
  ep.scrape.loras = { max: 2, running, waiting: [] };
  return ep;
}

it("frees a slot for a starving adapter where the adapter giving way has the fewest requests and runs elsewhere too", () => {
  const now = 1_000_000;
  const a = engine("a", ["hot", "x"]);
  const b = engine("b", ["hot", "y"]);
  const c = engine("c", ["z", "w"]);
  for (let i = 0; i < 5; i++) a.adapterRecord.began("hot");
  b.adapterRecord.began("hot");
  b.adapterRecord.began("y");
  b.adapterRecord.began("y");
  a.adapterRecord.began("x");
  c.adapterRecord.began("z");
  const room = makeRoomFor("rare", [a, b, c], now);
  // b's hot has 1 request and hot also runs on a: cheapest. (a's x has 1 too, but runs nowhere else.)
  assert.equal(room?.endpoint.name, "b");
  assert.equal(room?.evicting, "hot");
  assert.equal(makeRoomFor("rare", [a, b, c], now), null, "one reservation per adapter at a time");

  const filter = loraAvailableFilter();
  const ctx = (lora: string) => ({ request: pickRequest({ lora }), now });
  const hot = filter.filter(ctx("hot"), [a, b, c]);
  assert.deepEqual(
    hot.kept.map((e) => e.name),
    ["a"],
    "hot's new requests leave b (and c has no slot for it)",
  );
  assert.match(hot.removed[0]!.why, /slot is being freed for rare/);

  // hot drained from b: rare may be placed there, and once it runs the reservation is over.
  b.adapterRecord.ended("hot");
  b.scrape.loras = { max: 2, running: ["y"], waiting: [] };
  assert.deepEqual(
    filter.filter(ctx("rare"), [a, b, c]).kept.map((e) => e.name),
    ["b"],
  );
  b.adapterRecord.began("rare");
  assert.equal(b.adapterRecord.reserved(now), null);
  const after = filter.filter(ctx("hot"), [a, b, c]);
  assert.match(
    after.removed.find((r) => r.endpoint.name === "b")!.why,
    /all 2 adapter slots busy/,
    "b is refused now only because its slots are busy (y and rare)",
  );
});

it("a reservation nobody takes ends after RESERVE_MS", () => {
  const now = 5_000;
  const a = engine("a", ["x", "y"]);
  a.adapterRecord.began("x");
  assert.ok(makeRoomFor("rare", [a], now));
  assert.ok(a.adapterRecord.reserved(now + RESERVE_MS - 1));
  assert.equal(a.adapterRecord.reserved(now + RESERVE_MS), null);
});

it("spreads a hot adapter: its engine far busier than one without it frees a slot on the least loaded", () => {
  const now = 2_000_000;
  const a = engine("a", ["hot", "x"]);
  const b = engine("b", ["y", "z"]);
  const c = engine("c", ["w", "v"]);
  // a has ~20k prompt tokens of prefill pending: ~2 s at the prior's 0.1 ms a token.
  for (let i = 0; i < 20; i++) a.acquire(0, { uncached: 1000, stream: true }, now);
  for (let i = 0; i < 15; i++) a.adapterRecord.began("hot");
  for (let i = 0; i < 5; i++) a.adapterRecord.began("x");
  b.acquire(0, { uncached: 3000, stream: true }, now);
  for (const [ep, ads] of [
    [b, ["y", "z"]],
    [c, ["w", "v"]],
  ] as const)
    for (const ad of ads) ep.adapterRecord.began(ad);
  assert.equal(isHot("hot", a, [a, b, c], now), true);
  assert.equal(isHot("hot", b, [a, b, c], now), false, "b is no busier than the others");
  assert.equal(
    isHot("x", a, [a, b, c], now),
    false,
    "x brings a quarter of a's load: moving it relieves little",
  );
  const room = makeRoomFor("hot", [a, b, c], now);
  assert.equal(room?.endpoint.name, "c", "the least loaded engine that lacks it");
});
