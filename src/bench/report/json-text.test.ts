import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticResults } from "../../testing/synthetic-results.js";
import { jsonText } from "./json-text.js";

describe("jsonText", () => {
  it("parses back to what JSON.stringify gives", () => {
    const r = syntheticResults();
    const odd = { a: undefined, b: [undefined, 1], c: {}, d: [], e: new Date(0), f: { g: null } };
    for (const v of [r, odd]) assert.deepEqual(JSON.parse(jsonText(v)), JSON.parse(JSON.stringify(v)));
  });

  it("puts each sample and time point on one line", () => {
    const text = jsonText(syntheticResults());
    assert.match(
      text,
      /\n {8}\{"cls":"interactive","ttft_ms":[\d.]+,"e2e_ms":[\d.]+,"ok":true,"t_s":[\d.]+\},\n/,
    );
    assert.match(text, /\n {10}\{"t_s":0,"value":[\d.]+\},\n/);
  });
});
