// Test fixture for the batch store contract (batch-store-contract.ts): fixed times, jobs of numbered
// lines, the records a runner would write, and reading an output or error file back as records.

import assert from "node:assert/strict";
import type { BatchRow, BatchStore, ClaimedLine, NewBatchLine } from "../batch/batch-store.js";
import type { BatchRequestOutput } from "../batch/batch-types.js";

/** The contract's clock: every `now` is T0 plus something, never the wall clock. */
export const T0 = 1_700_000_000_000;
export const DAY = 86_400_000;
export const LEASE = 30_000;
export const ENDPOINT = "/v1/chat/completions";

/** What a case gets: `open()` another instance of the store under test, on the same state. */
export interface ContractContext {
  open(): Promise<BatchStore>;
}

/** `count` lines `<prefix>-1`… with small chat bodies; `pad` characters of filler in each body. */
export function linesOf(count: number, prefix = "req", pad = 0): NewBatchLine[] {
  return Array.from({ length: count }, (_, i) => ({
    line: i + 1,
    customId: `${prefix}-${i + 1}`,
    body: { model: "m", messages: [{ role: "user", content: `q${i + 1}${"x".repeat(pad)}` }] },
  }));
}

/** A job of `count` lines for `acme` (unless told), created at T0. */
export function newBatch(
  s: BatchStore,
  count: number,
  opts: { tenant?: string; windowMs?: number; pad?: number } = {},
): Promise<BatchRow> {
  return s.createBatch(
    {
      tenant: opts.tenant ?? "acme",
      endpoint: ENDPOINT,
      inputFileId: "file-input",
      completionWindowMs: opts.windowMs ?? DAY,
      metadata: null,
      lines: linesOf(count, "req", opts.pad ?? 0),
    },
    T0,
  );
}

/** A 200 answer's record. */
export function ok(customId: string, answer = customId): BatchRequestOutput {
  return {
    id: `batch_req_${customId}`,
    custom_id: customId,
    response: { status_code: 200, request_id: `r-${customId}`, body: { answer } },
    error: null,
  };
}

/** A 400 answer's record. */
export function bad(customId: string): BatchRequestOutput {
  return {
    id: `batch_req_${customId}`,
    custom_id: customId,
    response: { status_code: 400, request_id: `r-${customId}`, body: { error: { message: "no" } } },
    error: null,
  };
}

/** A record of an output or error file, as parsed. */
export type FileRecord = BatchRequestOutput & { readonly error: { code: string; message: string } | null };

/** The records of a JSONL file; every line ends with a newline. */
export function records(content: Buffer | null): FileRecord[] {
  assert.ok(content, "file exists");
  const text = content.toString("utf8");
  if (text === "") return [];
  assert.ok(text.endsWith("\n"), "every line ends with a newline");
  return text
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l) as FileRecord);
}

/** Records a success for each claimed line, asserting each is accepted. */
export async function finishAll(
  s: BatchStore,
  owner: string,
  claimed: readonly ClaimedLine[],
  now: number,
): Promise<void> {
  for (const c of claimed) {
    const done = await s.finishLine(
      owner,
      c.batchId,
      c.line,
      { state: "succeeded", result: ok(c.customId) },
      now,
    );
    assert.ok(done, `${c.batchId}:${c.line} finished`);
  }
}

/** The batch's row, which must exist. */
export async function batchOf(s: BatchStore, id: string): Promise<BatchRow> {
  const row = await s.batchById(id);
  assert.ok(row, `batch ${id} exists`);
  return row;
}

/** The records of the batch's output (or error) file, which must exist. */
export async function fileRecords(
  s: BatchStore,
  id: string,
  which: "output" | "error",
): Promise<FileRecord[]> {
  const row = await batchOf(s, id);
  const file = which === "output" ? row.output_file_id : row.error_file_id;
  assert.ok(file, `batch ${id} has an ${which} file`);
  return records(await s.fileContent(row.tenant, file));
}
