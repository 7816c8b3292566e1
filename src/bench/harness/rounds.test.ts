// `--repeat`: real rounds over a simulated engine behind tokengate and nginx, the order alternating.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { instantFleet } from "../../testing/instant-fleet.js";
import { skipWithout } from "../../testing/system-services.js";
import { renderReport } from "../report/markdown.js";
import { traceScenario } from "../scenarios/trace-replay.js";
import type { TraceRequest } from "../trace-formats/trace.js";
import { roundDir, runRounds } from "./rounds.js";

const fleet = instantFleet("f");

const trace: TraceRequest[] = Array.from({ length: 10 }, (_, i) => ({
  t_ms: i * 40,
  id: `r${i}`,
  tenant: "t",
  task: null,
  request_class: "interactive",
  input_tokens: 100,
  max_tokens: 4,
  stream: true,
}));

describe("bench --repeat", () => {
  it(
    "runs every round, alternates the routers' order and writes rounds 2.. apart",
    skipWithout("nginx"),
    async () => {
      const out = mkdtempSync(join(tmpdir(), "tokengate-rounds-"));
      try {
        const scenario = traceScenario("t.jsonl", fleet);
        const seen: number[] = [];
        const results = await runRounds(
          scenario,
          { seed: 1, quick: true, trace, progress: false, routers: ["tokengate", "least-request"] },
          2,
          out,
          true,
          (k) => seen.push(k),
        );
        assert.deepEqual(seen, [1, 2]);
        const rounds = results.rounds!;
        assert.equal(rounds.length, 2);
        assert.deepEqual(rounds[0]!.order, ["tokengate", "least-request"]);
        assert.deepEqual(rounds[1]!.order, ["least-request", "tokengate"]);
        for (const round of rounds) {
          for (const [name, r] of Object.entries(round.routers)) {
            assert.equal(r.status, "ok", `${name} in round ${round.round}: ${r.reason}`);
            assert.equal(r.overall!.count, trace.length);
            assert.equal(r.samples, undefined, "a round's record keeps no samples");
          }
        }
        assert.ok(results.routers.tokengate!.samples!.length > 0, "round 1 stays whole for the charts");
        // Round 1's request log goes to the run's folder (the caller writes its report), round 2's apart.
        assert.ok(existsSync(join(out, "gateway-tokengate.log")));
        const two = roundDir(out, 2);
        assert.ok(existsSync(join(two, "gateway-tokengate.log")));
        assert.match(readFileSync(join(two, "report.md"), "utf8"), /# Benchmark report/);
        assert.match(renderReport(results), /## Repeated rounds/);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
  );
});
