// Polls each region's summary endpoint every `polling.intervalMs` (with `polling.timeoutMs`, the region's
// bearer token if it has one), measures the round trip, and tells the decision core what it saw: a
// summary, or a failed poll and why. A region's polls run one at a time: a slow region is not asked
// again before its last answer (or timeout).

import { Agent, request } from "undici";
import type { DirectorConfig, DirectorCore, DirectorRegion } from "./director-types.js";
import { checkSummary } from "./summary-check.js";

/** A summary is a few KiB; a region answering megabytes is broken, not generous. */
const SUMMARY_LIMIT_BYTES = 1024 * 1024;

/** What the service hears of each poll (metrics, log events). */
export interface PollListener {
  /** The poll's result: a summary taken (`why` null), or a failure and why. */
  polled(region: string, why: string | null): void;
}

export class SummaryPoller {
  private readonly agent: Agent;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Regions polled at least once, answered or not (readiness). */
  readonly heard = new Set<string>();
  private stopped = false;

  constructor(
    private readonly config: DirectorConfig,
    private readonly core: DirectorCore,
    private readonly listener: PollListener,
    private readonly clock: () => number = Date.now,
  ) {
    this.agent = new Agent({ connect: { timeout: config.polling.timeoutMs }, keepAliveTimeout: 60_000 });
  }

  /** Polls every region now, then every interval. */
  start(): void {
    for (const r of this.config.regions) void this.loop(r);
  }

  private async loop(region: DirectorRegion): Promise<void> {
    if (this.stopped) return;
    const started = this.clock();
    await this.poll(region);
    if (this.stopped) return;
    const wait = Math.max(0, this.config.polling.intervalMs - (this.clock() - started));
    const timer = setTimeout(() => void this.loop(region), wait);
    timer.unref();
    this.timers.set(region.name, timer);
  }

  /** One poll of one region; the core is told either way. */
  async poll(region: DirectorRegion): Promise<void> {
    const began = performance.now();
    // A throw here (a bug) would end the loop, and with it the region's polls, for good.
    const why = await this.fetchSummary(region, began).catch(
      (err: unknown) => `internal error: ${String(err)}`,
    );
    if (this.stopped) return;
    this.heard.add(region.name);
    if (why !== null) this.core.observePollFailure(region.name, this.clock(), why);
    this.listener.polled(region.name, why);
  }

  /** Null when the summary was taken; otherwise why the poll failed. */
  private async fetchSummary(region: DirectorRegion, began: number): Promise<string | null> {
    const { timeoutMs } = this.config.polling;
    const headers: Record<string, string> = { accept: "application/json" };
    if (region.summaryToken !== null) headers.authorization = `Bearer ${region.summaryToken}`;
    let text: string;
    let rttMs: number;
    try {
      const res = await request(region.summaryUrl, {
        dispatcher: this.agent,
        headers,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const body = await readLimited(res.body);
      rttMs = performance.now() - began;
      if (res.statusCode !== 200) return `status ${res.statusCode}: ${body.slice(0, 200)}`;
      text = body;
    } catch (err) {
      return failureOf(err, timeoutMs);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return `not JSON: ${(err as Error).message}`;
    }
    const checked = checkSummary(value);
    if (!checked.ok) return `bad summary: ${checked.field}: ${checked.problem}`;
    if (checked.summary.region !== region.name)
      return `the summary names region "${checked.summary.region}", expected "${region.name}"`;
    this.core.observeSummary(checked.summary, this.clock(), rttMs);
    return null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.agent.destroy();
  }
}

async function readLimited(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > SUMMARY_LIMIT_BYTES) throw new Error(`the summary exceeds ${SUMMARY_LIMIT_BYTES} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function failureOf(err: unknown, timeoutMs: number): string {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  if (e.name === "TimeoutError" || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_BODY_TIMEOUT")
    return `no answer within polling.timeoutMs (${timeoutMs} ms)`;
  if (e.code === "UND_ERR_CONNECT_TIMEOUT") return `connect timeout (${timeoutMs} ms)`;
  const code = e.code ?? e.cause?.code;
  return code ? `${code}: ${e.message}` : e.message;
}
