import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { didYouMean, formatConfigError, formatPath } from "./errors.js";

describe("config error formatting", () => {
  it("renders YAML paths with dots, indexes, and quoted odd keys", () => {
    assert.equal(
      formatPath(["spec", "modelAliases", "summary-default", "pools", 1, "maxInputTokens"]),
      "spec.modelAliases.summary-default.pools[1].maxInputTokens",
    );
    assert.equal(
      formatPath(["metadata", "annotations", "ai.example.com/route-config-version"]),
      'metadata.annotations["ai.example.com/route-config-version"]',
    );
    assert.equal(formatPath([]), "");
  });

  it("prints file:line:col, path and message, or just the file when there is no position", () => {
    const e = {
      file: "examples/x/route.yaml",
      line: 23,
      column: 11,
      path: "spec.rules[0].routeTo",
      message: "m",
    };
    assert.equal(formatConfigError(e), "examples/x/route.yaml:23:11 spec.rules[0].routeTo: m");
    assert.equal(formatConfigError({ ...e, line: 0, path: "" }), "examples/x/route.yaml: m");
  });

  it("suggests close names only", () => {
    assert.equal(
      didYouMean("summary-onlne", ["summary-online", "summary-long"]),
      ' (did you mean "summary-online"?)',
    );
    assert.equal(
      didYouMean("maxInputToken", ["maxInputTokens", "minInputTokens"]),
      ' (did you mean "maxInputTokens"?)',
    );
    assert.equal(didYouMean("foo", ["summary-online"]), "");
    assert.equal(didYouMean("ab", ["xy"]), "");
  });
});
