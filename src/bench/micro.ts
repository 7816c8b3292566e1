// Micro-benchmarks of the hot path's pure functions (speed targets live here, never in unit tests):
// the gateway's token estimate, the simulator's tokenizer, and the benchmarks' generated prompt text (a
// 52,000-token text once warm; its target was "well under a millisecond").

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { estimateTextTokens } from "../profile/token-estimate.js";
import { sampleText } from "../sim/sample-text.js";
import { countTokens } from "../sim/tokenizer.js";
import { round } from "./stats.js";
import { generatedText } from "./workload/generated-text.js";

/** Best of `rounds` timings of `fn`, ms: other work on the machine only ever makes a call slower. */
function best(fn: () => void, rounds: number): number {
  for (let i = 0; i < Math.min(20, rounds); i++) fn();
  let b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    fn();
    b = Math.min(b, performance.now() - t0);
  }
  return b;
}

export async function runMicro(opts: { outDir: string }): Promise<void> {
  const texts = { en: sampleText("en", 60_000, 1), zh: sampleText("zh", 60_000, 2) };
  const rows: { what: string; lang: string; kb: number; ms: number; mb_per_s: number }[] = [];
  for (const [lang, text] of Object.entries(texts)) {
    const kb = Buffer.byteLength(text) / 1024;
    for (const [what, fn] of [
      ["gateway token estimate (60k tokens)", () => estimateTextTokens(text)],
      ["simulator tokenizer countTokens (60k tokens)", () => countTokens(text)],
    ] as const) {
      const ms = best(fn, 50);
      rows.push({ what, lang, kb: round(kb), ms: round(ms, 3), mb_per_s: round(kb / 1024 / (ms / 1000), 1) });
    }
  }
  for (const lang of ["en", "zh"] as const) {
    let seed = 1000;
    const ms = best(() => generatedText(lang, 52_000, seed++), 50);
    const kb = Buffer.byteLength(generatedText(lang, 52_000, 1)) / 1024;
    rows.push({
      what: "generated prompt text (52k tokens)",
      lang,
      kb: round(kb),
      ms: round(ms, 3),
      mb_per_s: round(kb / 1024 / (ms / 1000), 1),
    });
  }
  mkdirSync(opts.outDir, { recursive: true });
  writeFileSync(
    join(opts.outDir, "micro.json"),
    `${JSON.stringify({ date: new Date().toISOString(), rows }, null, 2)}\n`,
  );
  const md = `# Micro-benchmarks\n\n| what | text | size | best ms | MB/s |\n|---|---|---|---|---|\n${rows
    .map((r) => `| ${r.what} | ${r.lang} | ${r.kb} KB | ${r.ms} | ${r.mb_per_s} |`)
    .join("\n")}\n`;
  writeFileSync(join(opts.outDir, "micro.md"), md);
  process.stdout.write(md);
}
