// Where the request path's CPU goes (`npm run bench -- --only overhead-profile`): tokengate and the bare
// Node proxy, each started with `--cpu-prof` in front of the same two `instant` engines, carry the
// overhead benchmark's closed loop in turns; their profiles are read (cpu-profile.ts) into µs per request
// by area, side by side, so the difference between them is tokengate's own work and the stack it drives
// harder. Profiling slows both: read the ratios and the areas, not the absolute figures (the overhead
// benchmark gives those). Writes overhead-profile.{json,md} and keeps the two .cpuprofile files for
// Chrome's DevTools.

import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Child, startInstantEngines, startScript, startTokengate } from "../services/child-process.js";
import { round } from "../stats.js";
import { runClosedLoop } from "../traffic/load.js";
import { type CpuBreakdown, type CpuProfile, cpuBreakdown } from "./cpu-profile.js";
import { fixedRateClient } from "./overhead-client.js";
import {
  BARE_PROXY,
  CLIENT_CONNECTIONS,
  CONCURRENCY,
  MODEL,
  SMALL,
  writeOverheadGateway,
} from "./overhead-settings.js";

export interface ProfiledPath {
  requests: number;
  errors: number;
  busyUsPerRequest: number;
  areas: { area: string; usPerRequest: number }[];
  selfTop: { fn: string; usPerRequest: number }[];
  profile: string;
}

export interface OverheadProfileReport {
  benchmark: "overhead-profile";
  date: string;
  node: string;
  seconds: number;
  rounds: number;
  tokengate: ProfiledPath;
  bare: ProfiledPath;
}

const LISTENING = /listening on (http:\/\/[\d.]+:\d+)/;

/** Profiles tokengate and the bare proxy under the closed loop; writes the report under `outDir`. */
export async function runOverheadProfile(opts: {
  outDir: string;
  quick: boolean;
}): Promise<OverheadProfileReport> {
  const seconds = opts.quick ? 3 : 8;
  const rounds = 2;
  const tmp = mkdtempSync(join(tmpdir(), "tokengate-overhead-profile-"));
  const children: Child[] = [];
  try {
    const { child: sim, urls: engines } = await startInstantEngines(MODEL);
    children.push(sim);
    writeOverheadGateway(tmp, engines);
    const profDir = (name: string) => {
      const d = join(tmp, `prof-${name}`);
      mkdirSync(d);
      return { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", d] };
    };
    const gw = await startTokengate(
      ["gateway", "--config", tmp, "--port", "0", "--log", "/dev/null"],
      LISTENING,
      15_000,
      profDir("tokengate"),
    );
    children.push(gw);
    const bare = await startScript(BARE_PROXY, ["0", ...engines], LISTENING, 15_000, profDir("bare"));
    children.push(bare);
    const urls = { tokengate: LISTENING.exec(gw.output())![1]!, bare: LISTENING.exec(bare.output())![1]! };
    const served = { tokengate: { ok: 0, errors: 0 }, bare: { ok: 0, errors: 0 } };
    // Every request a process serves counts, warm-up too: its profile covers its whole life.
    for (let r = 0; r < rounds; r++) {
      for (const path of ["tokengate", "bare"] as const) {
        const client = fixedRateClient([urls[path]], CLIENT_CONNECTIONS);
        const run = await runClosedLoop({
          concurrency: CONCURRENCY,
          durationMs: seconds * 1000,
          send: (_c, seq) => client.send(seq, SMALL, false),
        });
        await client.close();
        const ok = run.results.filter((x) => !x.error).length;
        served[path].ok += ok;
        served[path].errors += run.results.length - ok;
        process.stderr.write(`  overhead-profile: ${path} round ${r + 1}: ${ok} requests\n`);
      }
    }
    // A clean exit writes the profile.
    await gw.stop();
    await bare.stop();
    mkdirSync(opts.outDir, { recursive: true });
    const read = (name: "tokengate" | "bare"): ProfiledPath => {
      const dir = join(tmp, `prof-${name}`);
      const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
      if (!file) throw new Error(`overhead-profile: ${name} wrote no CPU profile (did it exit cleanly?)`);
      const kept = join(opts.outDir, `overhead-profile-${name}.cpuprofile`);
      renameSync(join(dir, file), kept);
      const b: CpuBreakdown = cpuBreakdown(JSON.parse(readFileSync(kept, "utf8")) as CpuProfile);
      const n = Math.max(1, served[name].ok + served[name].errors);
      return {
        requests: served[name].ok,
        errors: served[name].errors,
        busyUsPerRequest: round(b.busyUs / n, 1),
        areas: b.areas.map((a) => ({ area: a.area, usPerRequest: round(a.us / n, 1) })),
        selfTop: b.selfTop.map((f) => ({ fn: f.fn, usPerRequest: round(f.us / n, 2) })),
        profile: kept,
      };
    };
    const report: OverheadProfileReport = {
      benchmark: "overhead-profile",
      date: new Date().toISOString(),
      node: process.version,
      seconds,
      rounds,
      tokengate: read("tokengate"),
      bare: read("bare"),
    };
    writeFileSync(join(opts.outDir, "overhead-profile.json"), `${JSON.stringify(report, null, 2)}\n`);
    const md = overheadProfileMarkdown(report);
    writeFileSync(join(opts.outDir, "overhead-profile.md"), md);
    process.stdout.write(md);
    return report;
  } finally {
    for (const c of children.reverse()) await c.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The report: µs per request by area, tokengate beside the bare proxy, then tokengate's hottest functions. */
export function overheadProfileMarkdown(r: OverheadProfileReport): string {
  const t = r.tokengate;
  const b = r.bare;
  const bareOf = new Map(b.areas.map((a) => [a.area, a.usPerRequest]));
  const names = [...new Set([...t.areas.map((a) => a.area), ...b.areas.map((a) => a.area)])];
  const tokOf = new Map(t.areas.map((a) => [a.area, a.usPerRequest]));
  names.sort(
    (x, y) => (tokOf.get(y) ?? 0) - (bareOf.get(y) ?? 0) - ((tokOf.get(x) ?? 0) - (bareOf.get(x) ?? 0)),
  );
  const lines = [
    "# Where the request path's CPU goes (CPU profiles, closed loop)",
    "",
    `${r.date}, Node ${r.node}; ${r.rounds} rounds of ${r.seconds} s per path, ${CONCURRENCY} clients, non-streaming; tokengate ${t.requests} requests (${t.errors} errors), bare Node proxy ${b.requests} (${b.errors}). Profiling slows both: compare the two, not with the overhead benchmark's figures. Areas are inclusive and overlap (an area counts what ran inside it, callees included); "own code" is time whose innermost frame is the process's own JavaScript. Module loading at startup is left out.`,
    "",
    `Busy CPU per request: tokengate **${t.busyUsPerRequest} µs**, bare Node proxy ${b.busyUsPerRequest} µs (${(t.busyUsPerRequest / Math.max(b.busyUsPerRequest, 0.1)).toFixed(2)}×).`,
    "",
    "| Area | tokengate µs/request | bare proxy µs/request | difference |",
    "|---|---:|---:|---:|",
    ...names.slice(0, 30).map((n) => {
      const tv = tokOf.get(n) ?? 0;
      const bv = bareOf.get(n) ?? 0;
      return `| ${n} | ${tv} | ${bv} | ${round(tv - bv, 1)} |`;
    }),
    "",
    "## tokengate's functions with the most self time",
    "",
    "| Function | µs/request |",
    "|---|---:|",
    ...t.selfTop.map((f) => `| \`${f.fn}\` | ${f.usPerRequest} |`),
    "",
    `Profiles: \`${t.profile}\`, \`${b.profile}\` (open in Chrome DevTools → Performance).`,
    "",
  ];
  return lines.join("\n");
}
