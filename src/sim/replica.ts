// One simulated engine replica: an HTTP server speaking the OpenAI API as vLLM serves it, in front of
// its own Engine, with /metrics in the vLLM or SGLang dialect, health, tokenize, /v1/models and the
// run-time LoRA routes (served-models.ts), vLLM's optional API key (api-key.ts), a framing of its own
// (framing.ts), and an admin API for faults and resets. Several replicas can live in one process, each
// on its own port.

import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PROMETHEUS_CONTENT_TYPE } from "../telemetry/metrics.js";
import { ApiKeyGuard, UNAUTHORIZED } from "./api-key.js";
import { renderChatPrompt } from "./chat-template.js";
import { Engine, type EngineConfig } from "./engine.js";
import { type Dialect, EngineMetrics } from "./engine-metrics.js";
import { SimHttpError } from "./errors.js";
import { type FaultConfig, noFaults, parseFaultUpdate } from "./faults.js";
import { Framing, type FramingOptions, VLLM_FRAMING } from "./framing.js";
import { sendError, sendJson, sendText, withJsonBody } from "./http-io.js";
import { type ApiKind, parseSimRequest, type SimRequest } from "./openai-request.js";
import { OutputText } from "./output-text.js";
import { RequestTimings } from "./request-timings.js";
import { JsonSink, StreamSink } from "./response-sinks.js";
import { StreamFrames } from "./responses.js";
import { hashString, seededRandom } from "./rng.js";
import {
  baseModelRoot,
  LoraAdapters,
  loadLoraAdapter,
  modelList,
  sglangLoraUpdate,
  unloadLoraAdapter,
} from "./served-models.js";
import { tokenize } from "./tokenizer.js";

export type OutputLenDist = "max" | "uniform";

export interface ReplicaOptions {
  name: string;
  host?: string;
  /** 0 picks a free port. */
  port: number;
  engine: EngineConfig;
  dialect?: Dialect;
  seed?: number;
  /** How long outputs are when ignore_eos is false: all of max_tokens, or uniform in [1, max_tokens]. */
  outputLenDist?: OutputLenDist;
  /** Natural output length when the request sets no max_tokens (the model "stops" there). */
  defaultOutputLen?: number;
  /** Send streamed tokens every N steps (vLLM/SGLang --stream-interval); the first token goes at once. */
  streamInterval?: number;
  faults?: Partial<FaultConfig>;
  maxBodyBytes?: number;
  /**
   * The version vLLM would report: the base model's `root` in /v1/models becomes `/models/<version>`,
   * as vLLM reports the path it loaded (null: the model name).
   */
  modelVersion?: string | null;
  /** vLLM's --api-key: every /v1 route needs `Authorization: Bearer <key>` (null: no key). */
  apiKey?: string | null;
  /** SSE line endings, `data:` spacing and JSON style (default: vLLM's). */
  framing?: Partial<FramingOptions>;
}

/**
 * Completion ids: a random prefix per process and a counter (24 hex digits, unique per process). A
 * `randomBytes` call per request was 7% of an instant replica's CPU at 1,000 streams/s.
 */
const ID_PREFIX = randomBytes(6).toString("hex");
let idCounter = 0;
function completionId(kind: string): string {
  idCounter = (idCounter + 1) % 0x1000000000000;
  return `${kind === "chat" ? "chatcmpl" : "cmpl"}-${ID_PREFIX}${idCounter.toString(16).padStart(12, "0")}`;
}

export class SimReplica {
  readonly name: string;
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  faults: FaultConfig = noFaults();
  /** The engine's view of recently finished requests, by request id (GET /admin/requests). */
  readonly timings = new RequestTimings(100_000);
  private readonly opts: Required<
    Omit<ReplicaOptions, "faults" | "engine" | "modelVersion" | "apiKey" | "framing">
  >;
  readonly framing: Framing;
  readonly modelVersion: string | null;
  private readonly server: http.Server;
  private readonly random: () => number;
  private readonly apiKey: ApiKeyGuard | null;
  /** Adapters requests may name as their model (--lora-modules, then run-time loads). */
  readonly loras: LoraAdapters;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private boundPort = 0;
  private listening = false;
  private requestsSinceFault = 0;
  private crashTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private staleMetrics: string | null = null;
  crashes = 0;

  constructor(opts: ReplicaOptions) {
    this.name = opts.name;
    this.opts = {
      name: opts.name,
      host: opts.host ?? "127.0.0.1",
      port: opts.port,
      dialect: opts.dialect ?? "vllm",
      seed: opts.seed ?? 0,
      outputLenDist: opts.outputLenDist ?? "max",
      defaultOutputLen: opts.defaultOutputLen ?? 256,
      maxBodyBytes: opts.maxBodyBytes ?? 64 * 1024 * 1024,
      streamInterval: Math.max(1, opts.streamInterval ?? 1),
    };
    this.modelVersion = opts.modelVersion ?? null;
    this.apiKey = opts.apiKey ? new ApiKeyGuard(opts.apiKey) : null;
    this.framing = opts.framing ? new Framing(opts.framing) : VLLM_FRAMING;
    this.engine = new Engine(opts.engine);
    this.metrics = new EngineMetrics(this.engine, this.opts.dialect);
    this.engine.observer = {
      onFinished: (r) => {
        this.metrics.onFinished(r);
        this.timings.record(r);
      },
    };
    this.random = seededRandom(this.opts.seed ^ hashString(opts.name));
    this.loras = new LoraAdapters(opts.engine.loraModules);
    this.server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => this.route(req, res));
    if (opts.faults) this.setFaults(opts.faults);
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://${this.opts.host}:${this.boundPort}`;
  }

  get isListening(): boolean {
    return this.listening;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.boundPort || this.opts.port, this.opts.host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.boundPort = (this.server.address() as AddressInfo).port;
    this.listening = true;
  }

  async stop(): Promise<void> {
    this.clearTimers();
    this.engine.stop();
    if (!this.listening) return;
    this.listening = false;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /**
   * Like a dying engine process: every socket closes at once, nothing listens until a restart, and
   * adapters loaded at run time are gone (the --lora-modules ones are served again).
   */
  crash(): void {
    this.crashes++;
    this.listening = false;
    this.engine.reset();
    this.loras.restore();
    this.server.close();
    this.server.closeAllConnections();
    if (this.faults.restartAfterMs !== null) {
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        this.start().catch(() => {});
      }, this.faults.restartAfterMs);
    }
  }

  /** Applies a partial fault update (already validated), re-arming crash timers and metric freezes. */
  setFaults(update: Partial<FaultConfig>): FaultConfig {
    this.faults = { ...this.faults, ...update };
    this.engine.slowdown = this.faults.slowdown;
    this.requestsSinceFault = 0;
    if ("crashAtMs" in update) {
      if (this.crashTimer) clearTimeout(this.crashTimer);
      this.crashTimer = null;
      if (update.crashAtMs !== null && update.crashAtMs !== undefined) {
        this.crashTimer = setTimeout(() => {
          this.crashTimer = null;
          this.crash();
        }, update.crashAtMs);
      }
    }
    if ("metricsStale" in update) this.staleMetrics = update.metricsStale ? this.metrics.expose() : null;
    return this.faults;
  }

  /** Back to a cold, idle engine with zeroed metrics (between benchmark runs). Faults stay. */
  reset(): void {
    this.engine.reset();
    this.metrics.reset();
    this.timings.clear();
  }

  private clearTimers(): void {
    if (this.crashTimer) clearTimeout(this.crashTimer);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.crashTimer = this.restartTimer = null;
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? "/").split("?", 1)[0] ?? "/";
    const m = req.method ?? "GET";
    if (this.apiKey && !this.apiKey.admits(m, path, req.headers.authorization)) {
      return this.sendJson(res, 401, UNAUTHORIZED);
    }
    if (m === "POST" && path === "/v1/chat/completions") return this.completion("chat", req, res);
    if (m === "POST" && path === "/v1/completions") return this.completion("completion", req, res);
    if (m === "GET" && path === "/metrics") return this.serveMetrics(res);
    if (m === "GET" && (path === "/health" || path === "/health/ready" || path === "/ping")) {
      const status = this.faults.healthFail ? 503 : 200;
      if (this.faults.healthDelayMs > 0)
        setTimeout(() => res.writeHead(status).end(), this.faults.healthDelayMs);
      else res.writeHead(status).end();
      return;
    }
    if (m === "GET" && path === "/v1/models") return this.sendJson(res, 200, this.models());
    // Each dialect's runtime LoRA routes: vLLM's under /v1 (plain-text answers), SGLang's without (JSON).
    const sglang = this.opts.dialect === "sglang";
    if (m === "POST" && path === (sglang ? "/load_lora_adapter" : "/v1/load_lora_adapter"))
      return this.withJson(req, res, (b) => {
        const load = () => loadLoraAdapter(this.engine.cfg, this.loras, b);
        if (!sglang) return sendText(res, load());
        const r = sglangLoraUpdate(this.loras, load);
        this.sendJson(res, r.status, r.body);
      });
    if (m === "POST" && path === (sglang ? "/unload_lora_adapter" : "/v1/unload_lora_adapter"))
      return this.withJson(req, res, (b) => {
        const unload = () => unloadLoraAdapter(this.loras, this.engine.lora, b);
        if (!sglang) return sendText(res, unload());
        const r = sglangLoraUpdate(this.loras, unload);
        this.sendJson(res, r.status, r.body);
      });
    if (m === "GET" && path === "/version") return this.sendJson(res, 200, { version: "tokengate-sim" });
    if (m === "POST" && path === "/tokenize")
      return this.withJson(req, res, (b) => this.tokenizeEndpoint(b, res));
    if (path === "/admin/faults") return this.adminFaults(m, req, res);
    if (m === "POST" && path === "/admin/reset") {
      this.reset();
      return this.sendJson(res, 200, { reset: true });
    }
    if (m === "GET" && path === "/admin/state") return this.sendJson(res, 200, this.state());
    if (m === "GET" && path === "/admin/requests") return this.sendJson(res, 200, this.timings.list());
    this.sendError(res, new SimHttpError(404, `Not Found: ${m} ${path}`));
  }

  private models(): unknown {
    const cfg = this.engine.cfg;
    return modelList(cfg, this.loras, baseModelRoot(cfg.modelName, this.modelVersion), this.createdAt);
  }

  state(): Record<string, unknown> {
    const e = this.engine;
    return {
      name: this.name,
      url: this.url,
      listening: this.listening,
      profile: e.cfg.profileName,
      model: e.cfg.modelName,
      modelVersion: this.modelVersion,
      apiKey: this.apiKey !== null,
      framing: this.framing.options,
      running: e.numRunning,
      waiting: e.numWaiting,
      kvCacheUsage: e.kv.usage(),
      cachedBlocks: e.kv.numCachedBlocks,
      loraAdapters: this.loras.names(),
      residentLoras: e.lora.residentAdapters(),
      loraLoads: e.lora.loads,
      stats: e.stats,
      faults: this.faults,
      crashes: this.crashes,
    };
  }

  private serveMetrics(res: http.ServerResponse): void {
    const send = () => {
      if (res.destroyed) return;
      res
        .writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE })
        .end(this.faults.metricsGarbage ? GARBAGE_METRICS : (this.staleMetrics ?? this.metrics.expose()));
    };
    if (this.faults.metricsDelayMs > 0) setTimeout(send, this.faults.metricsDelayMs);
    else send();
  }

  private adminFaults(method: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    if (method === "GET") return this.sendJson(res, 200, this.faults);
    if (method === "DELETE") {
      this.clearTimers();
      this.staleMetrics = null;
      this.faults = noFaults();
      this.engine.slowdown = 1;
      return this.sendJson(res, 200, this.faults);
    }
    if (method !== "POST") return this.sendError(res, new SimHttpError(405, "use GET, POST or DELETE"));
    this.withJson(req, res, (body) => {
      let update: Partial<FaultConfig>;
      try {
        update = parseFaultUpdate(body);
      } catch (err) {
        throw new SimHttpError(400, (err as Error).message);
      }
      this.sendJson(res, 200, this.setFaults(update));
    });
  }

  private tokenizeEndpoint(body: unknown, res: http.ServerResponse): void {
    const b = (body ?? {}) as Record<string, unknown>;
    const parsed = parseSimRequest(b.messages !== undefined ? "chat" : "completion", b);
    this.resolveModel(parsed.model);
    const tokens = this.promptTokens(parsed);
    this.sendJson(res, 200, {
      count: tokens.length,
      max_model_len: this.engine.cfg.maxModelLen,
      tokens: [...tokens],
    });
  }

  private completion(kind: ApiKind, req: http.IncomingMessage, res: http.ServerResponse): void {
    if (
      this.faults.crashAfterRequests !== null &&
      ++this.requestsSinceFault >= this.faults.crashAfterRequests
    ) {
      this.faults.crashAfterRequests = null;
      this.crash();
      return;
    }
    this.withJson(req, res, (body) => {
      const parsed = parseSimRequest(kind, body);
      const lora = this.resolveModel(parsed.model);
      if (this.faults.errorRate > 0 && this.random() < this.faults.errorRate) {
        throw new SimHttpError(this.faults.errorStatus, "The server is overloaded or not ready yet.");
      }
      const f = this.faults;
      if (f.maxWaiting !== null && this.engine.numWaiting >= f.maxWaiting) {
        throw new SimHttpError(429, "Failed to enqueue request, waiting requests queue is full", null, {
          "retry-after": String(f.retryAfterSeconds),
        });
      }
      this.serve(kind, parsed, lora, req, res);
    });
  }

  /** null for the base model, the adapter name for a LoRA; throws 404 for anything else. */
  private resolveModel(model: string | null): string | null {
    if (model === null || model === this.engine.cfg.modelName) return null;
    if (this.loras.has(model)) return model;
    throw new SimHttpError(404, `The model \`${model}\` does not exist.`, "model");
  }

  private promptTokens(r: SimRequest): Uint32Array {
    if (r.kind === "chat") return tokenize(renderChatPrompt(r.messages!));
    if (Array.isArray(r.prompt)) return Uint32Array.from(r.prompt);
    return tokenize(r.prompt as string);
  }

  private serve(
    kind: ApiKind,
    r: SimRequest,
    lora: string | null,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): void {
    const cfg = this.engine.cfg;
    const prompt = this.promptTokens(r);
    const promptLen = prompt.length;
    const field = kind === "chat" ? "messages" : "prompt";
    if (r.maxTokens !== null && promptLen + r.maxTokens > cfg.maxModelLen) {
      throw new SimHttpError(
        400,
        `This model's maximum context length is ${cfg.maxModelLen} tokens. However, you requested ` +
          `${promptLen + r.maxTokens} tokens (${promptLen} in the ${field}, ${r.maxTokens} in the completion). ` +
          `Please reduce the length of the ${field} or completion.`,
        field,
      );
    }
    if (promptLen >= cfg.maxModelLen) {
      throw new SimHttpError(
        400,
        `This model's maximum context length is ${cfg.maxModelLen} tokens. However, your request has ` +
          `${promptLen} input tokens. Please reduce the length of the input ${field}.`,
        field,
      );
    }
    const maxTokens = r.maxTokens ?? cfg.maxModelLen - promptLen;
    const seed = r.seed ?? (this.opts.seed ^ hashPrompt(prompt)) >>> 0;
    const rng = seededRandom(seed);
    let target = maxTokens;
    if (!r.ignoreEos) {
      if (r.maxTokens === null) target = Math.min(maxTokens, this.opts.defaultOutputLen);
      else if (this.opts.outputLenDist === "uniform") target = 1 + Math.floor(rng() * maxTokens);
    }
    const text = new OutputText(seed, looksChinese(r) ? "zh" : "en");
    const id = completionId(kind);
    const model = r.model ?? cfg.modelName;
    const created = Math.floor(Date.now() / 1000);
    const requestId =
      headerValue(req.headers["x-request-id"]) ?? headerValue(req.headers["x-ai-trace-id"]) ?? id;
    const sink = r.stream
      ? new StreamSink(
          this,
          res,
          new StreamFrames(kind, id, model, created, this.framing),
          text,
          r.includeUsage,
          requestId,
          this.opts.streamInterval,
        )
      : new JsonSink(this, res, kind, id, model, created, text, requestId);
    const engineReq = this.engine.add({
      id: requestId,
      promptTokens: prompt,
      maxTokens,
      targetOutputTokens: target,
      lora,
      outputTokenId: (i) => pieceTokenId(text.piece(i)),
      sink,
    });
    // The client going away aborts the request in the engine and frees its blocks.
    res.on("close", () => {
      if (engineReq.status !== "finished") this.engine.abort(engineReq);
    });
    if (r.stream) (sink as StreamSink).open();
  }

  private withJson(req: http.IncomingMessage, res: http.ServerResponse, fn: (body: unknown) => void): void {
    withJsonBody(req, res, this.framing, this.opts.maxBodyBytes, fn);
  }

  sendJson(res: http.ServerResponse, status: number, value: unknown): void {
    sendJson(res, this.framing, status, value);
  }

  sendError(res: http.ServerResponse, err: unknown): void {
    sendError(res, this.framing, err);
  }
}

const pieceIds = new Map<string, number>();

/** Token id of a generated piece (each piece is exactly one token); the piece vocabulary is small. */
function pieceTokenId(piece: string): number {
  let id = pieceIds.get(piece);
  if (id === undefined) {
    id = tokenize(piece)[0]!;
    pieceIds.set(piece, id);
  }
  return id;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function hashPrompt(tokens: Uint32Array): number {
  let h = 0x811c9dc5;
  const step = Math.max(1, Math.floor(tokens.length / 64));
  for (let i = 0; i < tokens.length; i += step) h = Math.imul(h ^ tokens[i]!, 0x01000193);
  return (h ^ tokens.length) >>> 0;
}

/** Chinese prompts get Chinese output: judged on the last message's first characters. */
function looksChinese(r: SimRequest): boolean {
  let s = "";
  if (r.messages) {
    const last = r.messages[r.messages.length - 1]!.content;
    s = typeof last === "string" ? last : (last ?? []).map((p) => p.text ?? "").join("");
  } else if (typeof r.prompt === "string") {
    s = r.prompt;
  }
  const n = Math.min(s.length, 400);
  let cjk = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x4e00 && c <= 0x9fff) cjk++;
  }
  return n > 0 && cjk / n > 0.2;
}

/** What /metrics serves under the `metricsGarbage` fault: a page no Prometheus parser can read a figure from. */
const GARBAGE_METRICS =
  'vllm:num_requests_waiting{model_name="x" NaNNaN\n\u0000\u0007vllm:kv_cache_usage_perc }} -\n<html>502 Bad Gateway</html>\n';
