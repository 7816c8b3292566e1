import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { procFdCount, procFdKinds, procRssBytes, readGatewayMetrics, readProbe } from "./soak-watch.js";

describe("soak watch", () => {
  it("reads loop delay, in-flight and queue depth from the gateway's metrics", () => {
    const text = [
      "# TYPE ai_gateway_event_loop_delay_seconds gauge",
      'ai_gateway_event_loop_delay_seconds{quantile="0.5"} 0.0012',
      'ai_gateway_event_loop_delay_seconds{quantile="0.99"} 0.01734',
      'ai_gateway_event_loop_delay_seconds{quantile="1"} 0.2',
      'ai_gateway_inflight_requests{pool="p",endpoint="a"} 2',
      'ai_gateway_inflight_requests{pool="p",endpoint="b"} 1',
      'ai_gateway_queue_depth{pool="p",priority="100"} 0',
      'ai_gateway_requests_total{pool="p",task="t",status="ok"} 9',
      "",
    ].join("\n");
    const m = readGatewayMetrics(text);
    assert.equal(m.loopP99Ms, 17.34);
    assert.equal(m.loopMaxMs, 200);
    assert.equal(m.inflight, 3);
    assert.equal(m.queued, 0);
    assert.equal(m.rssBytes, null, "process metrics are read only when the gateway has them");
    const withProcess = readGatewayMetrics(
      `process_resident_memory_bytes 104857600\nnodejs_heap_size_used_bytes 2e7\n`,
    );
    assert.equal(withProcess.rssBytes, 104857600);
    assert.equal(withProcess.heapUsedBytes, 2e7);
    assert.equal(withProcess.loopP99Ms, null);
  });

  it("reads RSS and fds from /proc, and the probe's lines", () => {
    assert.ok((procRssBytes(process.pid) ?? 0) > 10 * 1024 * 1024);
    assert.ok((procFdCount(process.pid) ?? 0) >= 3);
    const kinds = procFdKinds(process.pid)!;
    assert.ok(Object.values(kinds).reduce((a, b) => a + b, 0) >= 3);
    assert.equal(procRssBytes(2 ** 30), null, "a process that does not exist");
    const dir = mkdtempSync(join(tmpdir(), "soak-probe-test-"));
    try {
      const f = join(dir, "p.jsonl");
      writeFileSync(f, '{"at":1,"gc":false,"rss":5}\n{"at":2,"gc":true,"rss":4}\n{"at":3,"gc":fa');
      assert.deepEqual(
        readProbe(f).map((p) => p.at),
        [1, 2],
        "a line being written is skipped",
      );
      assert.deepEqual(readProbe(join(dir, "missing")), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
