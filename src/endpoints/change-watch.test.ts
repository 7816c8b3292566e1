import assert from "node:assert/strict";
import { it } from "node:test";
import { ChangeWatch } from "./change-watch.js";

it("a run of misses on one side is a change; noise either side, or a short run, is not", () => {
  const w = new ChangeWatch(3, 0.3);
  assert.equal(w.changed(200, 100), false);
  assert.equal(w.changed(200, 100), false);
  assert.equal(w.changed(50, 100), false, "an early miss breaks the late run");
  assert.equal(w.changed(110, 100), false, "within the error: not a miss");
  for (let i = 0; i < 2; i++) assert.equal(w.changed(50, 100), false);
  assert.equal(w.changed(50, 100), true, "three early misses in a row");
  assert.equal(w.changed(50, 100), false, "it starts over after a change");
});
