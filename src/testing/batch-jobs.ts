// Test fixture: the Batch API as a client drives it — JSONL input text, waiting for a job to end, and
// reading an output or error file's lines — for the end-to-end tests of the batch path.

import { setTimeout as sleep } from "node:timers/promises";
import type OpenAI from "openai";

/** `n` lines of JSONL, each `line(i)` as JSON, newline-terminated. */
export function jsonl(n: number, line: (i: number) => object): string {
  return `${Array.from({ length: n }, (_, i) => JSON.stringify(line(i))).join("\n")}\n`;
}

/**
 * Polls `probe` every 50 ms until it gives a value (not null), or fails after `ms` — a deadline for a
 * loaded two-core machine, not for a quiet one: it costs nothing when the value comes early.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | null> | T | null,
  ms = 60_000,
): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
    const v = await probe();
    if (v !== null) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The job once it has ended (completed, failed, expired, cancelled). */
export function finished(client: OpenAI, id: string, ms = 60_000): Promise<OpenAI.Batches.Batch> {
  return until(
    `batch ${id} to end`,
    async () => {
      const b = await client.batches.retrieve(id);
      return ["completed", "failed", "expired", "cancelled"].includes(b.status) ? b : null;
    },
    ms,
  );
}

/** An output or error file's records, parsed; none when the job has no such file. */
// biome-ignore lint/suspicious/noExplicitAny: the records are checked field by field by the tests
export async function fileLines(client: OpenAI, fileId: string | null | undefined): Promise<any[]> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}
