// Test fixture: a fake region gateway on loopback for the director's tests. It serves a RegionSummary
// the test controls at /admin/region/summary (or stops answering it), and answers /v1/chat/completions
// and /v1/completions with a JSON or SSE reply naming the region — or with a 5xx before any byte, or a
// stream held after its first chunk until the test lets it go. Also: a DirectorConfig over fake regions,
// and a stub decision core.

import http from "node:http";
import type { AddressInfo } from "node:net";
import type {
  DirectorConfig,
  DirectorCore,
  DirectorDecision,
  DirectorQuery,
  RegionCandidate,
  RegionState,
  RegionSummary,
} from "../director/director-types.js";

/** What the fake does at its summary endpoint. */
export type SummaryMode = "ok" | "hang" | "error";

export interface FakeRegionOptions {
  readonly name: string;
  /** Models served (ready, headroom `headroom`); default ["m"]. */
  readonly models?: readonly string[];
  readonly headroom?: number;
  /** The bearer token the summary endpoint requires; default none. */
  readonly summaryToken?: string;
}

/** A request the fake received at /v1/*. */
export interface SeenRequest {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

/** The words of a reply: `region <name> says hello` (streams: one word per chunk). */
export function replyWords(region: string): string[] {
  return ["region", region, "says", "hello"];
}

export class FakeRegion {
  summaryMode: SummaryMode = "ok";
  /** Summary polls answered (any mode). */
  summaryPolls = 0;
  /** The next this-many API requests answer 503 before any byte. */
  failNext = 0;
  /** A status for those failures (default 503). */
  failStatus = 503;
  readonly requests: SeenRequest[] = [];
  private summary: RegionSummary;
  private held: Promise<void> | null = null;
  private readonly server: http.Server;
  private port = 0;

  private constructor(private readonly opts: FakeRegionOptions) {
    this.summary = summaryOf(opts.name, opts.models ?? ["m"], opts.headroom ?? 0.8);
    this.server = http.createServer((req, res) => this.route(req, res));
  }

  static async start(opts: FakeRegionOptions): Promise<FakeRegion> {
    const f = new FakeRegion(opts);
    await new Promise<void>((resolve) => f.server.listen(0, "127.0.0.1", resolve));
    f.port = (f.server.address() as AddressInfo).port;
    return f;
  }

  get name(): string {
    return this.opts.name;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get summaryUrl(): string {
    return `${this.url}/admin/region/summary`;
  }

  /** The summary as served now (computedAt is the time of each answer). */
  currentSummary(now = Date.now()): RegionSummary {
    return { ...this.summary, computedAt: now };
  }

  /** Changes what the summary says from now on (`headroom` sets every model's). */
  setSummary(change: Partial<RegionSummary> & { headroom?: number }): void {
    const { headroom, ...rest } = change;
    let next: RegionSummary = { ...this.summary, ...rest };
    if (headroom !== undefined) {
      const byModel = Object.fromEntries(next.models.map((m) => [m.alias, headroom]));
      next = { ...next, headroomByModel: byModel, pools: next.pools.map((p) => ({ ...p, headroom })) };
    }
    this.summary = next;
  }

  /** Streams stop after their first chunk until the function returned is called. */
  holdStreams(): () => void {
    let release = () => {};
    this.held = new Promise<void>((r) => {
      release = () => {
        this.held = null;
        r();
      };
    });
    return release;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (req.method === "GET" && path === "/admin/region/summary") return this.serveSummary(req, res);
    if (req.method === "POST" && (path === "/v1/chat/completions" || path === "/v1/completions")) {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => void this.serveCompletion(req, res, path, Buffer.concat(chunks)));
      return;
    }
    req.resume();
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"code":"not_found"}}');
  }

  private serveSummary(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.summaryPolls++;
    if (this.summaryMode === "hang") return; // never answers: the poll times out
    if (this.summaryMode === "error") {
      res.writeHead(500, { "content-type": "text/plain" }).end("summary broken");
      return;
    }
    const token = this.opts.summaryToken;
    if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
      res
        .writeHead(401, { "content-type": "application/json" })
        .end('{"error":{"code":"admin_unauthorized"}}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(this.currentSummary()));
  }

  private async serveCompletion(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    path: string,
    raw: Buffer,
  ): Promise<void> {
    const body = JSON.parse(raw.toString("utf8") || "{}") as Record<string, unknown>;
    this.requests.push({ path, headers: req.headers, body });
    if (this.failNext > 0) {
      this.failNext--;
      res
        .writeHead(this.failStatus, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: "upstream_unavailable", message: `${this.name} is failing` } }));
      return;
    }
    const model = typeof body.model === "string" ? body.model : "m";
    const chat = path === "/v1/chat/completions";
    const words = replyWords(this.name);
    const common = { id: `cmpl-${this.name}`, created: 1_700_000_000, model };
    const headers = { "x-fake-region": this.name };
    if (body.stream !== true) {
      const text = words.join(" ");
      const reply = chat
        ? {
            ...common,
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          }
        : { ...common, object: "text_completion", choices: [{ index: 0, text, finish_reason: "stop" }] };
      res.writeHead(200, { ...headers, "content-type": "application/json" }).end(JSON.stringify(reply));
      return;
    }
    res.writeHead(200, { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (const [i, word] of words.entries()) {
      const text = i === 0 ? word : ` ${word}`;
      const last = i === words.length - 1;
      const choice = chat
        ? { index: 0, delta: i === 0 ? { role: "assistant", content: text } : { content: text } }
        : { index: 0, text };
      const chunk = {
        ...common,
        object: chat ? "chat.completion.chunk" : "text_completion",
        choices: [{ ...choice, finish_reason: last ? "stop" : null }],
      };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (i === 0 && this.held) await this.held;
    }
    res.end("data: [DONE]\n\n");
  }
}

/** A healthy region's summary: every model ready on one pool with `headroom`. */
export function summaryOf(region: string, models: readonly string[], headroom: number): RegionSummary {
  return {
    region,
    computedAt: Date.now(),
    draining: false,
    configVersion: `${region}-v1`,
    models: models.map((alias) => ({
      alias,
      versions: [{ version: `${alias}-1`, ready: true }],
      ready: true,
    })),
    pools: [
      { pool: `${region}-pool`, headroom, freeSlots: 8, routableEndpoints: 2, endpoints: 2, queued: 0 },
    ],
    headroomByModel: Object.fromEntries(models.map((m) => [m, headroom])),
    window: { windowS: 60, requests: 0, ttftP95Ms: null, errorRate: 0 },
  };
}

/**
 * A DirectorConfig over fake regions (each at its URL, cost 1), polled every 100 ms with a 500 ms
 * timeout, forward mode; `over` replaces any top-level part.
 */
export function directorConfigOf(
  regions: readonly FakeRegion[],
  over: Partial<DirectorConfig> = {},
): DirectorConfig {
  return {
    name: "test-director",
    listen: { host: "127.0.0.1", port: 0 },
    regions: regions.map((r) => ({
      name: r.name,
      gatewayUrl: r.url,
      summaryUrl: r.summaryUrl,
      summaryToken: null,
      cost: 1,
    })),
    latencyMs: {},
    defaultLatencyMs: 50,
    residency: {},
    weights: { latency: 0.3, headroom: 0.4, errors: 0.2, cost: 0.1 },
    hysteresis: { dwellMs: 0, switchMargin: 0 },
    breaker: { errorRateToOpen: 0.5, failuresToOpen: 2, openMs: 60_000, halfOpenProbes: 1 },
    spillover: { minHeadroom: 0, maxShare: 0 },
    affinity: { header: null, ttlMs: 60_000 },
    polling: { intervalMs: 100, staleAfterMs: 10_000, timeoutMs: 500 },
    mode: "forward",
    answerTtlS: 5,
    ...over,
  };
}

/**
 * A stand-in decision core for the service's tests (the real one is tested on its own): the region with
 * the most headroom for the model, among those with a summary and no failed poll since; the first
 * configured region is "home". Records what it is told.
 */
export class StubDirectorCore implements DirectorCore {
  readonly summaries = new Map<string, RegionSummary>();
  readonly rtts = new Map<string, number>();
  readonly pollFailures: { region: string; why: string }[] = [];
  readonly outcomes: { region: string; ok: boolean }[] = [];
  decisions = 0;
  private readonly failing = new Set<string>();

  constructor(private readonly names: readonly string[]) {}

  observeSummary(s: RegionSummary, _now: number, rttMs?: number): void {
    this.summaries.set(s.region, s);
    this.failing.delete(s.region);
    if (rttMs !== undefined) this.rtts.set(s.region, rttMs);
  }

  observePollFailure(region: string, _now: number, why: string): void {
    this.pollFailures.push({ region, why });
    this.failing.add(region);
  }

  observeOutcome(region: string, ok: boolean): void {
    this.outcomes.push({ region, ok });
  }

  decide(q: DirectorQuery, now: number): DirectorDecision {
    this.decisions++;
    return this.explain(q, now);
  }

  explain(q: DirectorQuery, _now: number): DirectorDecision {
    const candidates: RegionCandidate[] = this.names.map((region) => {
      const s = this.summaries.get(region);
      const h = s?.headroomByModel[q.model];
      const filtered =
        s === undefined
          ? "stale_summary"
          : this.failing.has(region)
            ? "breaker_open"
            : h === undefined || h <= 0
              ? "model_unavailable"
              : null;
      const headroom = filtered === null ? h! : null;
      return {
        region,
        filtered,
        score: headroom,
        terms: { latency: null, headroom, errors: null, cost: null },
      };
    });
    const best = candidates.filter((c) => c.score !== null).sort((a, b) => b.score! - a.score!)[0];
    if (!best) {
      const message = `model "${q.model}" is not ready in any region`;
      return { kind: "refuse", code: "model_unavailable", message, candidates };
    }
    const reason = best.region === this.names[0] ? "home" : "failover";
    return { kind: "region", region: best.region, reason, candidates, affinity: null };
  }

  regions(now: number): readonly RegionState[] {
    return this.names.map((region) => {
      const summary = this.summaries.get(region) ?? null;
      return {
        region,
        breaker: this.failing.has(region) ? "open" : "closed",
        breakerReason: this.failing.has(region) ? "poll failed" : null,
        summaryAgeMs: summary === null ? null : Math.max(0, now - summary.computedAt),
        stale: summary === null,
        summary,
        measuredRttMs: this.rtts.get(region) ?? null,
      };
    });
  }
}
