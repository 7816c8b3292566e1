// A new job's creation in the Redis batch store: its lines checked for a line number or custom_id twice
// before anything is written (so a duplicate leaves no batch), then cut in pieces of a few hundred KB,
// each one script call, serialized a piece at a time, under a writer's lease; and how a job whose writer
// died part-way is failed.

import type { NewBatchLine } from "./batch-rows.js";
import type { BatchErrors } from "./batch-types.js";

/** A job's writer holds it this long past its last piece; after, `finalizeReady` fails the job. */
export const WRITER_LEASE_MS = 60_000;

/** The job's creation was declared interrupted (its writer's lease ran out) while it was written. */
export class BatchCreationInterrupted extends Error {
  readonly code = "batch_creation_interrupted";
  constructor(readonly batchId: string) {
    super(`batch ${batchId}: its creation was interrupted (the writer's lease ran out)`);
  }
}

export const INTERRUPTED_ERRORS: BatchErrors = {
  object: "list",
  data: [
    {
      code: "batch_creation_interrupted",
      message: "The batch's lines were not all written: the process creating it stopped. Create it again.",
      param: null,
      line: null,
    },
  ],
};

/** A piece of lines holds about this many bytes of bodies, and at most `LINES_PER_PIECE` lines. */
export const LINE_PIECE_BYTES = 256 * 1024;
const LINES_PER_PIECE = 1000;

/** A line number or a custom_id twice in one job. */
export class DuplicateLine extends Error {
  readonly code = "duplicate_line";
  constructor(what: string) {
    super(`a batch's lines must be unique: ${what}`);
  }
}

/** Throws DuplicateLine when two lines share a number or a custom_id. */
export function checkUnique(lines: readonly NewBatchLine[]): void {
  const numbers = new Set<number>();
  const ids = new Map<string, number>();
  for (const l of lines) {
    if (numbers.has(l.line)) throw new DuplicateLine(`line ${l.line} twice`);
    numbers.add(l.line);
    const first = ids.get(l.customId);
    if (first !== undefined) {
      throw new DuplicateLine(`custom_id ${JSON.stringify(l.customId)} on lines ${first} and ${l.line}`);
    }
    ids.set(l.customId, l.line);
  }
}

/** The lines as (line, custom_id, body) triples, flattened, a piece at a time. */
export function* linePieces(lines: readonly NewBatchLine[]): Generator<string[]> {
  let piece: string[] = [];
  let bytes = 0;
  for (const l of lines) {
    const body = typeof l.body === "string" ? l.body : JSON.stringify(l.body);
    piece.push(String(l.line), l.customId, body);
    bytes += body.length + l.customId.length;
    if (bytes >= LINE_PIECE_BYTES || piece.length >= 3 * LINES_PER_PIECE) {
      yield piece;
      piece = [];
      bytes = 0;
    }
  }
  if (piece.length > 0) yield piece;
}

/** `metadata.task` of a job's stored metadata, or null. */
export function taskOf(metadata: string | null): string | null {
  if (metadata === null) return null;
  const t = (JSON.parse(metadata) as Record<string, unknown>).task;
  return typeof t === "string" && t !== "" ? t : null;
}
