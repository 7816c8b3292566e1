import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  classifyOutcome,
  FleetTimeline,
  groupFailures,
  jsonErrorCode,
  replyErrorCode,
  type SoakOutcome,
} from "./soak-classify.js";

function outcome(o: Partial<SoakOutcome>): SoakOutcome {
  return {
    seq: 1,
    stream: true,
    startMs: 0,
    endMs: 1000,
    status: 200,
    endpoint: "a",
    traceId: "soak-1",
    started: true,
    contentFrames: 3,
    ttftMs: 50,
    cancelled: false,
    error: null,
    ...o,
  };
}

const ERR = { code: "upstream_unavailable", phase: "reply" as const, detail: "…" };

describe("soak failure classification", () => {
  it("reads the gateway's error code, or falls back to the status", () => {
    assert.equal(
      replyErrorCode(503, '{"error":{"code":"no_healthy_endpoint","message":"x"}}'),
      "no_healthy_endpoint",
    );
    assert.equal(replyErrorCode(502, "<html>bad gateway</html>"), "http_502");
    assert.equal(replyErrorCode(500, '{"error":{"message":"no code"}}'), "http_500");
    assert.equal(jsonErrorCode('{"error":{"code":"upstream_error"}}'), "upstream_error");
    assert.equal(jsonErrorCode("not json"), null);
  });

  it("keeps each engine's down intervals", () => {
    const t = new FleetTimeline(["a", "b", "c"]);
    t.markDown("a", 100, "crash");
    t.markDown("a", 150, "health"); // already down: no new interval
    assert.deepEqual(t.downAt(99), []);
    assert.deepEqual(t.downAt(100), ["a"]);
    t.markUp("a", 5200);
    assert.deepEqual(t.downAt(5199), ["a"]);
    assert.deepEqual(t.downAt(5200), []);
    t.markDown("b", 9000, "health");
    assert.deepEqual(t.downAt(1e9), ["b"], "an interval still open lasts to the end");
    assert.equal(t.lastCrashBefore(50), null);
    assert.equal(t.lastCrashBefore(9500), 100, "health failures are not crashes");
    assert.equal(t.intervals().length, 2);
  });

  it("successes and the client's own cancels are not failures", () => {
    const t = new FleetTimeline(["a", "b"]);
    assert.equal(classifyOutcome(outcome({}), t), null);
    assert.equal(classifyOutcome(outcome({ cancelled: true }), t), null);
  });

  it("a stream relaying from the engine that crashed is cut, not counted against the target", () => {
    const t = new FleetTimeline(["a", "b", "c"]);
    t.markDown("a", 900, "crash");
    const f = classifyOutcome(
      outcome({ endpoint: "a", error: { code: "upstream_error", phase: "mid_stream", detail: "" } }),
      t,
    )!;
    assert.equal(f.class, "stream_cut_by_its_engine_crash");
    assert.equal(f.engineDown, true);
    assert.equal(f.sinceCrashMs, 100);
  });

  it("anything else failing while another engine is up counts, engine down or not", () => {
    const t = new FleetTimeline(["a", "b", "c"]);
    t.markDown("a", 900, "crash");
    // Not started (a reply): the gateway could have retried it on b or c.
    const during = classifyOutcome(outcome({ started: false, status: 503, endpoint: null, error: ERR }), t)!;
    assert.equal(during.class, "failed_while_healthy_capacity");
    assert.equal(during.engineDown, true);
    assert.deepEqual(during.downEngines, ["a"]);
    // A stream on a healthy engine that broke: the gateway's doing, not the crash's.
    const other = classifyOutcome(
      outcome({ endpoint: "b", error: { code: "no_done", phase: "mid_stream", detail: "" } }),
      t,
    )!;
    assert.equal(other.class, "failed_while_healthy_capacity");
    t.markUp("a", 950);
    const calm = classifyOutcome(outcome({ started: false, error: ERR }), t)!;
    assert.equal(calm.class, "failed_while_healthy_capacity");
    assert.equal(calm.engineDown, false);
  });

  it("with every engine down, a failure is not counted against the target", () => {
    const t = new FleetTimeline(["a", "b"]);
    t.markDown("a", 0, "crash");
    t.markDown("b", 0, "health");
    const f = classifyOutcome(outcome({ started: false, endpoint: null, error: ERR }), t)!;
    assert.equal(f.class, "failed_without_healthy_capacity");
  });

  it("groups failures by class, code, phase and engine-down, largest first, with a few samples", () => {
    const t = new FleetTimeline(["a", "b"]);
    t.markDown("a", 500, "crash");
    const fs = [
      ...Array.from({ length: 5 }, (_, i) =>
        classifyOutcome(outcome({ seq: i, traceId: `soak-${i}`, started: false, error: ERR }), t),
      ),
      classifyOutcome(
        outcome({ endpoint: "a", error: { code: "upstream_error", phase: "mid_stream", detail: "" } }),
        t,
      ),
    ].filter((f) => f !== null);
    const g = groupFailures(fs, 2);
    assert.equal(g.length, 2);
    assert.equal(g[0]!.code, "upstream_unavailable");
    assert.equal(g[0]!.count, 5);
    assert.deepEqual(
      g[0]!.samples.map((s) => s.traceId),
      ["soak-0", "soak-1"],
    );
    assert.equal(g[1]!.class, "stream_cut_by_its_engine_crash");
  });
});
