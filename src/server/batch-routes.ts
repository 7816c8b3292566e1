// The Files and Batch API's HTTP surface, as OpenAI's clients call it: `POST /v1/files` (multipart,
// purpose `batch`), `GET /v1/files[/{id}[/content]]`, `DELETE /v1/files/{id}`, `POST /v1/batches`,
// `GET /v1/batches[/{id}]`, `POST /v1/batches/{id}/cancel`. Every file and job belongs to the tenant
// that created it; another tenant is told it does not exist (404), never that it is someone else's.
// A job's input is validated line by line when it is created: a bad file makes a `failed` job that
// names every bad line, and nothing of it runs.

import type http from "node:http";
import { checkBatchInput } from "../batch/batch-input.js";
import { type BatchStore, FileTooLarge, toBatchObject, toFileObject } from "../batch/batch-store.js";
import type { BatchMetadata } from "../batch/batch-types.js";
import { MultipartError, readMultipart } from "../batch/multipart.js";
import type { GatewayConfigSet } from "../config/config-set.js";
import { GatewayError } from "../errors/gateway-error.js";
import { sendJson } from "../http/admin-body.js";
import { readBody } from "../http/request-body.js";
import type { Identity } from "../pipeline/identify.js";
import { parseJson } from "../pipeline/plan-record.js";
import { servedModelNames } from "../route/route-request.js";

/** What the routes need of the gateway. */
export interface BatchApi {
  readonly store: BatchStore;
  config(): GatewayConfigSet;
  identify(req: http.IncomingMessage): Identity;
  /** A job was created: the runner may look for work now. */
  created(): void;
}

const ENDPOINTS = ["/v1/chat/completions", "/v1/completions"] as const;
type Endpoint = (typeof ENDPOINTS)[number];
const WINDOW = /^([1-9][0-9]{0,4})(s|m|h)$/;
const MAX_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** How long the rest of a refused upload is read and dropped before the connection is cut. */
const DISCARD_MS = 5000;

/** Whether `path` is one of the Batch API's; `route` answers it. */
export function isBatchPath(path: string): boolean {
  return (
    path === "/v1/files" ||
    path.startsWith("/v1/files/") ||
    path === "/v1/batches" ||
    path.startsWith("/v1/batches/")
  );
}

/** Answers a Batch API request; every error in the OpenAI shape. */
export async function routeBatch(
  api: BatchApi | null,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  try {
    if (api === null) {
      throw new GatewayError(
        "batches_disabled",
        "the Files and Batch API is off on this gateway: set GatewayConfig spec.batches.path (its SQLite file) or batches.store redis",
      );
    }
    const who = api.identify(req);
    await serve(api, who.tenant, req, res, path, query);
  } catch (err) {
    const e =
      err instanceof GatewayError
        ? err
        : new GatewayError("internal_error", `internal error: ${(err as Error).message}`);
    if (res.headersSent || res.destroyed) return;
    // An upload refused part-way: the connection is not reused, and the rest of the body is read and
    // dropped (for at most DISCARD_MS) so the client, still sending, reads the answer rather than a reset
    // (the openai client reported a refused upload as "Connection error." and retried it).
    const unread = req.readableEnded === false;
    if (unread) res.setHeader("connection", "close");
    e.send(res, "none");
    if (unread) {
      req.resume();
      setTimeout(() => req.destroy(), DISCARD_MS).unref();
    }
  }
}

async function serve(
  api: BatchApi,
  tenant: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const parts = path.split("/").slice(2); // ["files", id?, "content"?] or ["batches", id?, "cancel"?]
  const [kind, rawId, action] = parts;
  const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
  const m = req.method ?? "GET";
  if (kind === "files") {
    if (id === undefined && m === "POST") return upload(api, tenant, req, res);
    if (id === undefined && m === "GET") {
      return sendJson(res, 200, await api.store.listFiles(tenant, listOptions(query, true)));
    }
    if (id !== undefined && action === undefined && m === "GET") {
      const f = await api.store.getFile(tenant, id);
      if (!f) throw fileNotFound(id);
      return sendJson(res, 200, toFileObject(f));
    }
    if (id !== undefined && action === "content" && m === "GET") {
      const content = await api.store.fileContent(tenant, id);
      if (!content) throw fileNotFound(id);
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": content.length });
      res.end(content);
      return;
    }
    if (id !== undefined && action === undefined && m === "DELETE") {
      if (!(await api.store.deleteFile(tenant, id))) throw fileNotFound(id);
      return sendJson(res, 200, { id, object: "file", deleted: true });
    }
  } else {
    if (id === undefined && m === "POST") return createBatch(api, tenant, req, res);
    if (id === undefined && m === "GET") {
      return sendJson(res, 200, await api.store.listBatches(tenant, listOptions(query, false)));
    }
    if (id !== undefined && action === undefined && m === "GET") {
      const b = await api.store.getBatch(tenant, id);
      if (!b) throw batchNotFound(id);
      return sendJson(res, 200, toBatchObject(b));
    }
    if (id !== undefined && action === "cancel" && m === "POST") return cancel(api, tenant, id, res);
  }
  req.resume();
  throw new GatewayError("not_found", `no route for ${m} ${path}`);
}

async function upload(
  api: BatchApi,
  tenant: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const max = api.config().gateway.batches.maxFileBytes;
  let form: Awaited<ReturnType<typeof readMultipart>>;
  try {
    form = await readMultipart(req, req.headers["content-type"], { maxFileBytes: max });
  } catch (err) {
    if (!(err instanceof MultipartError)) throw err;
    if (err.code === "file_too_large") {
      throw new GatewayError(
        "file_too_large",
        `the file is larger than this gateway takes (${max} bytes; batches.maxFileBytes)`,
        {
          param: "file",
        },
      );
    }
    throw new GatewayError("invalid_multipart", err.message, { param: err.param });
  }
  const purpose = form.fields.purpose;
  if (purpose !== "batch") {
    throw new GatewayError(
      "invalid_request",
      purpose === undefined
        ? "purpose is required (batch)"
        : `purpose ${JSON.stringify(purpose)} is not supported here; use "batch"`,
      { param: "purpose" },
    );
  }
  if (!form.file) throw new GatewayError("invalid_request", "a file part is required", { param: "file" });
  try {
    const row = await api.store.createFile({
      tenant,
      purpose: "batch",
      filename: form.file.filename,
      content: form.file.data,
      maxBytes: max,
    });
    sendJson(res, 200, toFileObject(row));
  } catch (err) {
    if (err instanceof FileTooLarge) {
      throw new GatewayError(
        "file_too_large",
        `the file is larger than ${max} bytes (batches.maxFileBytes)`,
        { param: "file" },
      );
    }
    throw err;
  }
}

async function createBatch(
  api: BatchApi,
  tenant: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const config = api.config();
  const body = parseJson(await readBody(req, config.gateway.limits));
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new GatewayError("invalid_request", "the body must be a JSON object");
  }
  const b = body as Record<string, unknown>;
  const inputFileId = b.input_file_id;
  if (typeof inputFileId !== "string" || inputFileId === "") {
    throw new GatewayError("invalid_request", "input_file_id is required", { param: "input_file_id" });
  }
  const endpoint = b.endpoint;
  if (typeof endpoint !== "string" || !(ENDPOINTS as readonly string[]).includes(endpoint)) {
    throw new GatewayError("invalid_request", `endpoint must be one of ${ENDPOINTS.join(", ")}`, {
      param: "endpoint",
    });
  }
  const windowMs = parseWindow(b.completion_window);
  const metadata = parseMetadata(b.metadata);
  const file = await api.store.getFile(tenant, inputFileId);
  if (!file) throw fileNotFound(inputFileId, "input_file_id");
  if (file.purpose !== "batch") {
    throw new GatewayError("invalid_request", `file ${inputFileId} has purpose ${file.purpose}, not batch`, {
      param: "input_file_id",
    });
  }
  const content = (await api.store.fileContent(tenant, inputFileId))!;
  const known = new Set(servedModelNames(config));
  const limits = config.gateway.batches;
  const checked = await checkBatchInput(content, {
    endpoint: endpoint as Endpoint,
    knownModel: (m) => known.has(m),
    limits: { maxLines: limits.maxLines, maxLineBytes: limits.maxLineBytes },
  });
  const base = {
    tenant,
    endpoint,
    inputFileId,
    completionWindowMs: windowMs,
    completionWindow: String(b.completion_window),
    metadata,
  };
  const row =
    checked.errors.length > 0
      ? await api.store.createFailedBatch({ ...base, errors: { object: "list", data: checked.errors } })
      : await api.store.createBatch({
          ...base,
          lines: checked.lines.map((l) => ({ line: l.line, customId: l.customId, body: l.body })),
        });
  if (checked.errors.length === 0) api.created();
  sendJson(res, 200, toBatchObject(row));
}

async function cancel(api: BatchApi, tenant: string, id: string, res: http.ServerResponse): Promise<void> {
  const row = await api.store.cancelBatch(tenant, id);
  if (!row) throw batchNotFound(id);
  if (row.status !== "cancelling" && row.status !== "cancelled") {
    throw new GatewayError("batch_not_cancellable", `batch ${id} is ${row.status} and cannot be cancelled`);
  }
  sendJson(res, 200, toBatchObject(row));
}

/** `24h` as OpenAI takes it; also shorter or longer windows (`30m`, `48h`), up to seven days. */
function parseWindow(v: unknown): number {
  const m = typeof v === "string" ? WINDOW.exec(v) : null;
  const ms = m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "s" | "m" | "h"] : Number.NaN;
  if (!(ms > 0 && ms <= MAX_WINDOW_MS)) {
    throw new GatewayError(
      "invalid_request",
      'completion_window must be a duration such as "24h" (at most 168h)',
      {
        param: "completion_window",
      },
    );
  }
  return ms;
}

/** Up to 16 pairs, keys ≤ 64 characters, values ≤ 512, as OpenAI's metadata. */
function parseMetadata(v: unknown): BatchMetadata | null {
  if (v === undefined || v === null) return null;
  const bad = (why: string) => new GatewayError("invalid_request", `metadata: ${why}`, { param: "metadata" });
  if (typeof v !== "object" || Array.isArray(v)) throw bad("must be an object of strings");
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 16) throw bad("at most 16 pairs");
  for (const [k, val] of entries) {
    if (k.length > 64) throw bad(`key ${JSON.stringify(k.slice(0, 20))}… is longer than 64 characters`);
    if (typeof val !== "string" || val.length > 512)
      throw bad(`${k} must be a string of at most 512 characters`);
  }
  return v as BatchMetadata;
}

function listOptions(
  q: URLSearchParams,
  files: boolean,
): { limit?: number; after?: string; purpose?: "batch" | "batch_output" } {
  const out: { limit?: number; after?: string; purpose?: "batch" | "batch_output" } = {};
  const limit = q.get("limit");
  if (limit !== null) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1)
      throw new GatewayError("invalid_request", "limit must be a positive integer", { param: "limit" });
    out.limit = n;
  }
  const after = q.get("after");
  if (after !== null) out.after = after;
  const purpose = q.get("purpose");
  if (files && purpose !== null) {
    if (purpose !== "batch" && purpose !== "batch_output") {
      throw new GatewayError("invalid_request", "purpose must be batch or batch_output", {
        param: "purpose",
      });
    }
    out.purpose = purpose;
  }
  return out;
}

function fileNotFound(id: string, param = "file_id"): GatewayError {
  return new GatewayError("file_not_found", `No such File object: ${id}`, { param });
}

function batchNotFound(id: string): GatewayError {
  return new GatewayError("batch_not_found", `No such Batch object: ${id}`, { param: "batch_id" });
}
