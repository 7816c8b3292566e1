// Pins what a reload does to flow control: a pool that is still there keeps its queue (the same
// PoolFlow, new settings); a rule's pause gate keeps its state under the rule's new condition, and the
// waiting requests, which hold the gate, follow it; a rule's pause that is gone lifts.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { GatewayConfigSet } from "../config/config-set.js";
import { loadConfigTexts } from "../config/loader.js";
import { FlowControl } from "./flow-control.js";

const DIR = "examples/support-summary";
const ENV = { env: { TOKENGATE_UPSTREAM_SECRET: "a-test-secret-of-32-characters!!" } };

function config(edit: (route: string) => string = (r) => r): GatewayConfigSet {
  const files: Record<string, string> = {};
  for (const f of ["gateway.yaml", "pools.yaml", "route.yaml"])
    files[f] = readFileSync(`${DIR}/${f}`, "utf8");
  files["route.yaml"] = edit(files["route.yaml"]!);
  const r = loadConfigTexts(files, ENV);
  assert.ok(r.ok, r.ok ? "" : JSON.stringify(r.errors));
  return r.config;
}

describe("flow control across a reload", () => {
  it("keeps pools' queues and a rule's pause state under its new condition; a removed pause lifts", () => {
    const first = new FlowControl<unknown>(config());
    const gate = first.gates.get("quality-batch")!;
    first.observeTtft("summary-online", 5000, 1000);
    for (let i = 0; i < 30; i++) first.observeTtft("summary-online", 5000, 1000 + i);
    first.evaluate(2000);
    assert.ok(gate.paused, "paused: the live pool's P95 is far above 2,000 ms");
    const online = first.pools.get("summary-online")!;

    const second = new FlowControl<unknown>(
      config((r) => r.replace("ttftP95MsGt: 2000", "ttftP95MsGt: 9000")),
      {},
      first,
    );
    first.handOver();
    assert.equal(second.pools.get("summary-online"), online, "the same queue, its waiting requests in place");
    assert.equal(second.gates.get("quality-batch"), gate, "the same gate object the waiting requests hold");
    assert.equal(gate.when.ttftP95MsGt, 9000);
    assert.ok(
      gate.paused,
      "its state carries over until the next evaluation decides under the new condition",
    );

    const third = new FlowControl<unknown>(
      config((r) => r.replace(/ {8}pauseWhen:[\s\S]*?retryAfterSeconds: 900\n/, "")),
      {},
      second,
    );
    assert.equal(third.gates.has("quality-batch"), false);
    assert.equal(gate.paused, false, "the rule lost its pause: what waits under it is held no more");
    third.stop();
  });
});
