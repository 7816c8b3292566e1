import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { areaOf, type CpuProfile, cpuBreakdown } from "./cpu-profile.js";

const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });
const OWN = "file:///srv/tokengate/dist/server/forward.js";
const PICK = "file:///srv/tokengate/dist/picker/framework/pick-endpoint.js";

// root ─┬─ (idle) 2
//       ├─ attempts (own/server) ─┬─ pickEndpoint (own/picker) 3 ── end (node:http) 5
//       │                         └─ (self) 1
//       ├─ (garbage collector) 4
//       └─ require (module loading) ── evaluate 7
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 3, 6, 7] },
    { id: 2, callFrame: frame("(idle)", "") },
    { id: 3, callFrame: frame("attempts", OWN, 23), children: [4] },
    { id: 4, callFrame: frame("pickEndpoint", PICK, 10), children: [5] },
    { id: 5, callFrame: frame("end", "node:_http_outgoing", 1142) },
    { id: 6, callFrame: frame("(garbage collector)", "") },
    { id: 7, callFrame: frame("require", "node:internal/modules/helpers"), children: [8] },
    { id: 8, callFrame: frame("evaluate", "") },
  ],
  // One sample per entry, each 10 µs (the delta after it).
  samples: [2, 2, 4, 4, 4, 5, 5, 5, 5, 5, 3, 6, 6, 6, 6, 8, 8, 8, 8, 8, 8, 8],
  timeDeltas: Array.from({ length: 23 }, () => 10),
};

describe("cpuBreakdown", () => {
  const b = cpuBreakdown(profile);
  const area = (name: string) => b.areas.find((a) => a.area === name)?.us ?? 0;

  it("counts busy time without idle and without module loading", () => {
    // 3 (pick) + 5 (end) + 1 (attempts) + 4 (gc) samples of 10 µs.
    assert.equal(b.busyUs, 130);
  });

  it("charges each area what ran inside it, once per sample", () => {
    assert.equal(area("own/server"), 90); // attempts, with everything it called
    assert.equal(area("own/picker"), 80); // pickEndpoint and the write it made
    assert.equal(area("node:http"), 50);
    assert.equal(area("gc"), 40);
    assert.equal(area("own code"), 40); // innermost frame the process's own: pickEndpoint ×3, attempts ×1
  });

  it("ranks functions by self time, with where they are", () => {
    assert.deepEqual(b.selfTop[0], { fn: "end node:_http_outgoing:1143", us: 50 });
    assert.ok(b.selfTop.some((f) => f.fn === "pickEndpoint dist/picker/framework/pick-endpoint.js:11"));
  });
});

describe("areaOf", () => {
  it("names the gateway's folders, packages (scoped too) and Node's parts", () => {
    assert.equal(areaOf(OWN, "x"), "own/server");
    assert.equal(areaOf("file:///a/node_modules/undici/lib/core/request.js", "x"), "undici");
    assert.equal(areaOf("file:///a/node_modules/@grpc/grpc-js/build/src/x.js", "x"), "@grpc/grpc-js");
    assert.equal(areaOf("file:///a/dist/node_modules/yaml/dist/x.js", "x"), "yaml");
    assert.equal(areaOf("node:_http_server", "x"), "node:http");
    assert.equal(areaOf("node:internal/streams/writable", "x"), "node:streams");
    assert.equal(areaOf("", "writev"), "socket writes");
    assert.equal(areaOf("node:internal/process/task_queues", "processTicksAndRejections"), "other");
  });
});
