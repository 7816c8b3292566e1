// The soak benchmark's judgement of each request that did not succeed: the client's own cancels are not
// failures; a stream already relaying from an engine when that engine crashed is cut (its tokens were
// sent, no gateway can move it) and counted apart; every other failure at a moment when an engine other
// than the crashed one was up and healthy is a failure "while healthy capacity remained" — the figure
// the soak's target holds at 0. Failures carry their error code and whether an engine was down then,
// so a report can say what went wrong.

/** One request of the soak load, as the client saw it. Times are ms from the start of the load. */
export interface SoakOutcome {
  seq: number;
  stream: boolean;
  startMs: number;
  endMs: number;
  /** HTTP status; 0 when no response came. */
  status: number;
  /** The gateway's `x-ai-endpoint` header: the engine that answered (null before a response). */
  endpoint: string | null;
  traceId: string;
  /**
   * The reply had reached the client: a 200 (a stream's headers go out with its first frame, after
   * which the gateway can no longer retry it elsewhere).
   */
  started: boolean;
  contentFrames: number;
  /** ms from send to the first frame carrying text (streams); NaN otherwise. */
  ttftMs: number;
  /** The client aborted it on purpose before it ended (a planned cancel that fired). */
  cancelled: boolean;
  error: SoakError | null;
}

export type FailurePhase = "reply" | "mid_stream" | "transport" | "client_timeout";

export interface SoakError {
  /** The gateway's error code, or `http_<status>`, `connection_<name>`, `no_done`, `client_timeout`. */
  code: string;
  phase: FailurePhase;
  detail: string;
}

/**
 * The error code of a failed reply: the gateway's `error.code` (OpenAI shape), else `http_<status>`.
 * @example replyErrorCode(503, '{"error":{"code":"no_healthy_endpoint"}}') // "no_healthy_endpoint"
 */
export function replyErrorCode(status: number, body: string): string {
  return jsonErrorCode(body) ?? `http_${status}`;
}

/** The `error.code` of an SSE error event's data, or of an error body; null when there is none. */
export function jsonErrorCode(data: string): string | null {
  try {
    const parsed = JSON.parse(data) as { error?: { code?: unknown } };
    const code = parsed?.error?.code;
    return typeof code === "string" && code !== "" ? code : null;
  } catch {
    return null;
  }
}

export interface DownInterval {
  engine: string;
  fromMs: number;
  /** null: still down when the run ended. */
  toMs: number | null;
  /** `crash`: the benchmark crashed it; `health`: its /health stopped answering 200 on its own. */
  cause: "crash" | "health";
}

/** When each engine was down (crashed, or failing its health check), from the benchmark's own view. */
export class FleetTimeline {
  private readonly down: DownInterval[] = [];
  private readonly open = new Map<string, DownInterval>();

  constructor(readonly engines: readonly string[]) {}

  /** The engine is down from `atMs` (a no-op when it is down already). */
  markDown(engine: string, atMs: number, cause: DownInterval["cause"]): void {
    if (this.open.has(engine)) return;
    const d: DownInterval = { engine, fromMs: atMs, toMs: null, cause };
    this.open.set(engine, d);
    this.down.push(d);
  }

  /** The engine answers its health check again at `atMs`. */
  markUp(engine: string, atMs: number): void {
    const d = this.open.get(engine);
    if (!d) return;
    d.toMs = atMs;
    this.open.delete(engine);
  }

  isDown(engine: string): boolean {
    return this.open.has(engine);
  }

  /** The engines down at `atMs` (an interval holds its start, not its end). */
  downAt(atMs: number): string[] {
    const out = new Set<string>();
    for (const d of this.down) if (d.fromMs <= atMs && (d.toMs === null || atMs < d.toMs)) out.add(d.engine);
    return [...out];
  }

  /** The start of the last crash at or before `atMs`, or null. */
  lastCrashBefore(atMs: number): number | null {
    let last: number | null = null;
    for (const d of this.down)
      if (d.cause === "crash" && d.fromMs <= atMs) last = Math.max(last ?? 0, d.fromMs);
    return last;
  }

  intervals(): readonly DownInterval[] {
    return this.down;
  }
}

export type FailureClass =
  /** Counted against the target: at least one engine other than a down one was up and healthy. */
  | "failed_while_healthy_capacity"
  /** A stream already relaying from an engine that crashed: cut, and told so with an error event. */
  | "stream_cut_by_its_engine_crash"
  /** Every engine was down: nothing could have served it. */
  | "failed_without_healthy_capacity";

export interface ClassifiedFailure {
  class: FailureClass;
  code: string;
  phase: FailurePhase;
  stream: boolean;
  /** Whether any engine was down when the client saw the failure. */
  engineDown: boolean;
  downEngines: string[];
  endpoint: string | null;
  atMs: number;
  /** ms since the last crash began (any engine), null before the first. */
  sinceCrashMs: number | null;
  traceId: string;
  detail: string;
}

/** Null for a success or the client's own cancel; else the failure and its class. */
export function classifyOutcome(o: SoakOutcome, fleet: FleetTimeline): ClassifiedFailure | null {
  if (o.error === null || o.cancelled) return null;
  const down = fleet.downAt(o.endMs);
  const upOthers = fleet.engines.filter((e) => !down.includes(e)).length;
  const cls: FailureClass =
    o.started && o.endpoint !== null && down.includes(o.endpoint)
      ? "stream_cut_by_its_engine_crash"
      : upOthers >= 1
        ? "failed_while_healthy_capacity"
        : "failed_without_healthy_capacity";
  const crash = fleet.lastCrashBefore(o.endMs);
  return {
    class: cls,
    code: o.error.code,
    phase: o.error.phase,
    stream: o.stream,
    engineDown: down.length > 0,
    downEngines: down,
    endpoint: o.endpoint,
    atMs: o.endMs,
    sinceCrashMs: crash === null ? null : Math.round(o.endMs - crash),
    traceId: o.traceId,
    detail: o.error.detail,
  };
}

/** One row of the failure table: a class, an error code, and whether an engine was down. */
export interface FailureGroup {
  class: FailureClass;
  code: string;
  phase: FailurePhase;
  engineDown: boolean;
  count: number;
  streams: number;
  /** The first few of the group (trace ids and details for diagnosis). */
  samples: ClassifiedFailure[];
}

/** Groups failures by class, code, phase and engine-down, the largest groups first. */
export function groupFailures(failures: readonly ClassifiedFailure[], samplesPerGroup = 3): FailureGroup[] {
  const groups = new Map<string, FailureGroup>();
  for (const f of failures) {
    const key = `${f.class}|${f.code}|${f.phase}|${f.engineDown}`;
    let g = groups.get(key);
    if (!g) {
      g = {
        class: f.class,
        code: f.code,
        phase: f.phase,
        engineDown: f.engineDown,
        count: 0,
        streams: 0,
        samples: [],
      };
      groups.set(key, g);
    }
    g.count++;
    if (f.stream) g.streams++;
    if (g.samples.length < samplesPerGroup) g.samples.push(f);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}
