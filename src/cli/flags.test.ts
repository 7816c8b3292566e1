// Every command refuses a bad command line before doing anything: exit status 2, the problem with the
// flag named on the first line of stderr, then the command's usage text. Run as `tokengate` is run.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { CLI_MAIN } from "../testing/cli-gateway.js";

function tokengate(args: string[]) {
  const r = spawnSync(process.execPath, [CLI_MAIN, ...args], { encoding: "utf8", timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dir = mkdtempSync(join(tmpdir(), "tokengate-flags-"));
const config = join(dir, "config.yaml");
writeFileSync(
  config,
  `apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: p }
spec: { engine: vllm, model: m-base, endpoints: ["http://127.0.0.1:9"] }
---
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "flags-1" } }
spec:
  modelAliases:
    m: { defaultPool: p, pools: [{ name: p, maxInputTokens: 4096, maxOutputTokens: 64 }] }
---
apiVersion: tokengate.dev/v1alpha1
kind: GatewayConfig
metadata: { name: g }
spec:
  listen: { host: 127.0.0.1, port: 0 }
  logging: { destination: ${join(dir, "missing-folder", "access.log")} }
`,
);

/** [command line, the problem the first line of stderr names]. */
const CASES: [string[], string][] = [
  [["gateway", "--port", "abc"], '--port: expected an integer 0..65535, got "abc"'],
  [["gateway", "--config", config, "--port", "abc"], '--port: expected an integer 0..65535, got "abc"'],
  [["gateway", "--config", config, "--port", "-1"], '--port: expected an integer 0..65535, got "-1"'],
  [["gateway", "--config", config, "--port", "65536"], '--port: expected an integer 0..65535, got "65536"'],
  [["gateway", "--config", config, "--port", "80.5"], '--port: expected an integer 0..65535, got "80.5"'],
  [["gateway", "--config", config, "--port="], '--port: expected an integer 0..65535, got ""'],
  [["gateway", "--config", config, "--verbose"], "--verbose: unknown option"],
  [["gateway", "--config", config, "serve"], 'unexpected argument "serve"'],
  [["gateway"], "--config is required"],
  [["gateway", "--config"], "--config: expected a value"],
  [
    ["gateway", "--config", config, "--log", "--port", "1"],
    '--log: expected a value, got the option "--port" (write --log=--port if it is the value)',
  ],
  [["gateway", "--config", config, "--log="], '--log: expected stdout, stderr, none or a file path, got ""'],
  [["gateway", "--config", config, "--log", dir], `--log: "${dir}" is a folder; expected a file path`],
  [
    ["gateway", "--config", config, "--log", "/nonexistent-tokengate/a.log"],
    '--log: no folder "/nonexistent-tokengate" for "/nonexistent-tokengate/a.log"',
  ],
  [["gateway", "--config", config, "--host="], '--host: expected an address to listen on, got ""'],
  [["sim", "--port", "abc"], '--port: expected an integer 0..65535, got "abc"'],
  [
    ["sim", "--port", "65535", "--replicas", "2"],
    "--replicas: 2 replicas from --port 65535 would pass port 65535",
  ],
  [["sim", "--replicas", "0"], '--replicas: expected an integer >= 1, got "0"'],
  [["sim", "--max-num-seqs", "2.5"], '--max-num-seqs: expected an integer >= 1, got "2.5"'],
  [["sim", "--seed", "1e3"], '--seed: expected an integer >= 0, got "1e3"'],
  [["sim", "--error-rate", "1.5"], '--error-rate: expected a number 0..1, got "1.5"'],
  [["sim", "--stall-ms", "-5"], '--stall-ms: expected a number >= 0, got "-5"'],
  [["sim", "--beta0-us", "fast"], '--beta0-us: expected a number >= 0, got "fast"'],
  [["sim", "--profile", "tpu"], '--profile: unknown profile "tpu"'],
  [["sim", "--fast"], "--fast: unknown option"],
  [
    ["sim", "--fleet", "fleet.yaml", "--port", "1"],
    "--fleet: cannot be combined with --port (the fleet file sets it)",
  ],
  [["bench"], "expected a scenario or a trace.jsonl"],
  [["bench", "no-such-scenario"], 'unknown scenario "no-such-scenario"'],
  [["bench", "shared-prefix", "--seed", "x"], '--seed: expected an integer >= 0, got "x"'],
  [["bench", "shared-prefix", "--duration", "0"], '--duration: expected a number > 0, got "0"'],
  [["bench", "shared-prefix", "--duration", "1m"], '--duration: expected a number > 0, got "1m"'],
  [["bench", "shared-prefix", "--routers", "nginx"], '--routers: unknown router "nginx"'],
  [["bench", "shared-prefix", "--fast"], "--fast: unknown option"],
  [["bench", "shared-prefix", "multi-turn"], 'unexpected argument "multi-turn"'],
  [
    ["route", "explain", "--config", config, "--input-tokens", "many"],
    '--input-tokens: expected an integer >= 0, got "many"',
  ],
  [
    ["route", "explain", "--config", config, "--input-tokens", "-4"],
    '--input-tokens: expected an integer >= 0, got "-4"',
  ],
  [
    ["route", "explain", "--config", config, "--input-tokens", "4", "--max-tokens", "0"],
    '--max-tokens: expected an integer >= 1, got "0"',
  ],
  [["route", "explain", "--config", config, "--input-tokens", "4", "--verbose"], "--verbose: unknown option"],
  [
    ["route", "explain", "--gateway", "localhost:8080", "--request", config],
    "--gateway: expected the admin listener",
  ],
  [["route", "explain", "--gateway", "http://127.0.0.1:1", "--config", config], "--config: unknown option"],
  [["config"], 'expected "config validate <file or folder>"'],
  [["config", "validate"], "validate: expected a file or folder"],
  [["config", "validate", config, "--strict"], "--strict: unknown option"],
  [["config", "validate", config, "other"], 'unexpected argument "other"'],
  [["start", "--port", "8080"], "--port: unknown option"],
];

describe("tokengate refuses a bad command line with the flag named", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [args, problem] of CASES) {
    it(`tokengate ${args.map((a) => a.replace(dir, "<tmp>")).join(" ")}`, () => {
      const r = tokengate(args);
      assert.equal(r.code, 2, r.stderr);
      const [first, blank, usage] = r.stderr.split("\n");
      assert.ok(first!.startsWith(`tokengate ${args[0]}: ${problem}`), first);
      assert.equal(blank, "");
      assert.match(usage!, new RegExp(`^Usage: tokengate ${args[0]}`));
      assert.equal(r.stdout, "", "nothing started, nothing printed");
    });
  }

  it("a log destination from the config that cannot be written: exit 1, named, not started", () => {
    const r = tokengate(["gateway", "--config", config]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^tokengate gateway: logging\.destination: no folder ".*missing-folder" for .*; not started$/m,
    );
  });

  it("no command: exit 2 and the command list; --help for every command: exit 0", () => {
    const none = tokengate([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^tokengate: expected a command\n\nUsage: tokengate <command>/);
    for (const cmd of ["gateway", "sim", "bench", "route", "config", "start"]) {
      const r = tokengate([cmd, "--help"]);
      assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^Usage: tokengate ${cmd}`), cmd);
    }
  });
});
