import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runConfigCommand } from "./config.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const code = await runConfigCommand(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err: err.replaceAll(root, "") };
}

describe("tokengate config validate", () => {
  it("prints the document count, route version and aliases → pools → endpoints, and exits 0", async () => {
    const r = await run(["validate", `${root}examples/support-summary`]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.match(lines[0]!, /^ok: \d+ documents, route config version support-summary-2026-06-15-r3$/);
    assert.ok(lines.includes("alias summary-default (default pool summary-online)"), r.out);
    assert.ok(
      lines.includes(
        "    vllm summary-7b (summary-7b-2026-06-15): http://127.0.0.1:8001, http://127.0.0.1:8002, http://127.0.0.1:8003",
      ),
      r.out,
    );
    assert.ok(
      lines.includes(
        "rule 3 quality-batch: class in [batch] → summary-batch (paused while summary-online TTFT P95 > 2000 ms over 60 s; resumes below 1600 ms held 10 s)",
      ),
      r.out,
    );
    assert.ok(
      lines.includes(
        "    gateway queue (up to 10000) until an endpoint has waiting < 1, KV < 85%, tokens in flight <= 120000",
      ),
      r.out,
    );
    assert.ok(lines.includes("gateway: listen 127.0.0.1:8080, metrics/admin on 127.0.0.1:9090"), r.out);
  });

  it("prints every error with file:line:col and YAML path, and exits 1", async () => {
    const r = await run(["validate", `${root}src/config/testdata/broken`]);
    assert.equal(r.code, 1);
    assert.equal(r.out, "");
    assert.ok(
      r.err.includes(
        'src/config/testdata/broken/route.yaml:29:16 spec.rules[0].routeTo: pool "summary-onlne" is not declared under any model alias (did you mean "summary-online"?)\n',
      ),
      r.err,
    );
    assert.match(r.err, /\ninvalid: 14 errors\n$/);
  });

  it("warns about an unset secret variable unless --require-env", async () => {
    const saved = process.env.TOKENGATE_UPSTREAM_SECRET;
    delete process.env.TOKENGATE_UPSTREAM_SECRET;
    try {
      const lax = await run(["validate", `${root}examples/support-summary`]);
      assert.equal(lax.code, 0);
      assert.match(lax.err, /^warning: .*gateway\.yaml:\d+:\d+ .*TOKENGATE_UPSTREAM_SECRET is not set/);
      const strict = await run(["validate", "--require-env", `${root}examples/support-summary`]);
      assert.equal(strict.code, 1);
    } finally {
      if (saved !== undefined) process.env.TOKENGATE_UPSTREAM_SECRET = saved;
    }
  });

  it("exits 2 with usage on bad arguments and 0 on --help", async () => {
    assert.equal((await run([])).code, 2);
    assert.equal((await run(["check", "x"])).code, 2);
    assert.equal((await run(["validate", "--bogus", "x"])).code, 2);
    const help = await run(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.out, /^Usage: tokengate config validate/);
  });
});
