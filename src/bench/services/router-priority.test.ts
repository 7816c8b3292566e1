import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { getPriority } from "node:os";
import { after, describe, it } from "node:test";
import { describePriority, favorRouter, HARNESS_NICE, ROUTER_NICE } from "./router-priority.js";

function sleeper(): ChildProcess {
  return spawn("sleep", ["30"], { stdio: "ignore" });
}

describe("favorRouter", () => {
  const router = sleeper();
  const engines = sleeper();
  after(() => {
    router.kill();
    engines.kill();
  });

  it("raises the router, or else lowers the engines, and says which it did", () => {
    // The children start at this process's own niceness (not 0 under `nice npm test`).
    const base = getPriority();
    const mode = favorRouter(router.pid!, [engines.pid!]);
    if (mode === "router nice -10") {
      assert.equal(getPriority(router.pid!), ROUTER_NICE);
      assert.equal(getPriority(engines.pid!), base);
    } else if (mode === "engines nice 10") {
      assert.equal(getPriority(router.pid!), base);
      assert.equal(getPriority(engines.pid!), HARNESS_NICE);
    } else {
      assert.equal(getPriority(router.pid!), base);
    }
    assert.ok(describePriority(mode).length > 20);
  });

  it("never throws for a process that is gone", () => {
    assert.equal(favorRouter(2 ** 22 + 12345, []), "none");
  });
});
