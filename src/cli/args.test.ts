import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { intFlag, logDestinationProblem, numberFlag, parseFlags, portFlag, UsageError } from "./args.js";

const options = {
  port: { type: "string" },
  log: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const refuses = (fn: () => unknown, message: string) =>
  assert.throws(fn, (err: unknown) => err instanceof UsageError && err.message === message);

describe("parseFlags", () => {
  it("parses what parseArgs does", () => {
    const { values, positionals } = parseFlags({
      args: ["--port", "8080", "--log=a.log", "-h", "x"],
      options,
      allowPositionals: true,
    });
    assert.deepEqual({ ...values }, { port: "8080", log: "a.log", help: true });
    assert.deepEqual(positionals, ["x"]);
  });

  it("refuses with the flag named", () => {
    const p =
      (args: string[], allowPositionals = false) =>
      () =>
        parseFlags({ args, options, allowPositionals });
    refuses(p(["--bogus"]), "--bogus: unknown option");
    refuses(p(["--bogus=1"]), "--bogus: unknown option");
    refuses(p(["-x"]), "-x: unknown option");
    refuses(p(["--port"]), "--port: expected a value");
    refuses(
      p(["--log", "--port", "1"]),
      '--log: expected a value, got the option "--port" (write --log=--port if it is the value)',
    );
    refuses(p(["--json=yes"]), '--json: takes no value, got "yes"');
    refuses(p(["extra"]), 'unexpected argument "extra"');
    // `-` alone is a value (stdin/stdout by convention), and `--x=-y` says what it means.
    assert.equal(parseFlags({ args: ["--log", "-"], options }).values.log, "-");
    assert.equal(parseFlags({ args: ["--log=-y"], options }).values.log, "-y");
  });

  it("takes a negative number as the value, for its range check to refuse", () => {
    const { values } = parseFlags({ args: ["--port", "-1", "--json"], options });
    assert.equal(values.port, "-1");
    assert.equal(values.json, true);
    refuses(() => portFlag(values.port), '--port: expected an integer 0..65535, got "-1"');
  });
});

describe("numeric flags", () => {
  it("integers: plain digits within the range", () => {
    assert.equal(intFlag(undefined, "n", 0), undefined);
    assert.equal(intFlag("42", "n", 0), 42);
    assert.equal(portFlag("0"), 0);
    assert.equal(portFlag("65535"), 65535);
    for (const bad of [
      "",
      " 8",
      "8 ",
      "8.0",
      "1e3",
      "0x10",
      "abc",
      "NaN",
      "Infinity",
      "99999999999999999999",
    ])
      refuses(() => intFlag(bad, "n", 0), `--n: expected an integer >= 0, got "${bad}"`);
    refuses(() => portFlag("65536"), '--port: expected an integer 0..65535, got "65536"');
    refuses(() => intFlag("0", "replicas", 1), '--replicas: expected an integer >= 1, got "0"');
  });

  it("decimals: within the range, or above its least value", () => {
    assert.equal(numberFlag("0.25", "r", 0, 1), 0.25);
    assert.equal(numberFlag(".5", "r", 0, 1), 0.5);
    assert.equal(numberFlag("3", "d", 0, Number.POSITIVE_INFINITY, true), 3);
    refuses(() => numberFlag("1.5", "r", 0, 1), '--r: expected a number 0..1, got "1.5"');
    refuses(
      () => numberFlag("0", "d", 0, Number.POSITIVE_INFINITY, true),
      '--d: expected a number > 0, got "0"',
    );
    for (const bad of ["", "1e3", "abc", "-1", "."])
      refuses(() => numberFlag(bad, "ms", 0), `--ms: expected a number >= 0, got "${bad}"`);
  });
});

describe("logDestinationProblem", () => {
  it("takes stdout, stderr, none and a writable file or folder; names the problem otherwise", () => {
    const dir = mkdtempSync(join(tmpdir(), "tokengate-args-"));
    try {
      for (const ok of ["stdout", "stderr", "none", join(dir, "new.log")])
        assert.equal(logDestinationProblem(ok), null, ok);
      assert.equal(logDestinationProblem(""), 'expected stdout, stderr, none or a file path, got ""');
      assert.equal(logDestinationProblem(dir), `"${dir}" is a folder; expected a file path`);
      const missing = join(dir, "no", "a.log");
      assert.equal(logDestinationProblem(missing), `no folder "${join(dir, "no")}" for "${missing}"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
