// Faults a simulated replica can be told to show, by flag at start or at run time through
// POST /admin/faults: 5xx errors, crashes, stalled streams, slow or stale metrics, failing health,
// 429 with Retry-After when the waiting queue passes a bound, and a GPU that runs slower than its profile.

export interface FaultConfig {
  /** Share of completion requests (0..1) answered with `errorStatus` instead of being served. */
  errorRate: number;
  errorStatus: number;
  /** Crash (close every socket, stop listening) when this many more requests have arrived. */
  crashAfterRequests: number | null;
  /** Crash this many ms after the fault is set. */
  crashAtMs: number | null;
  /** Listen again this many ms after a crash (null: stay down). */
  restartAfterMs: number | null;
  /** Streams stop sending after this many tokens... */
  stallAfterTokens: number | null;
  /** ...for this long (null: until the client gives up). */
  stallMs: number | null;
  /** /metrics answers only after this delay. */
  metricsDelayMs: number;
  /** /metrics keeps serving the page it had when this was set. */
  metricsStale: boolean;
  /** /metrics answers 200 with a page that is not Prometheus text (a proxy's error page, truncation). */
  metricsGarbage: boolean;
  /** /health answers 503. */
  healthFail: boolean;
  /** /health answers only after this delay (an engine slow to answer, not dead). */
  healthDelayMs: number;
  /** Answer 429 with Retry-After when this many requests already wait (null: unbounded, like vLLM). */
  maxWaiting: number | null;
  retryAfterSeconds: number;
  /** Every step takes this many times its profile's duration (a throttled or shared GPU); 1 is normal. */
  slowdown: number;
}

export function noFaults(): FaultConfig {
  return {
    errorRate: 0,
    errorStatus: 503,
    crashAfterRequests: null,
    crashAtMs: null,
    restartAfterMs: null,
    stallAfterTokens: null,
    stallMs: null,
    metricsDelayMs: 0,
    metricsStale: false,
    metricsGarbage: false,
    healthFail: false,
    healthDelayMs: 0,
    maxWaiting: null,
    retryAfterSeconds: 1,
    slowdown: 1,
  };
}

type Kind = "rate" | "status" | "count" | "ms" | "bool" | "seconds" | "factor";
const FIELDS: Record<keyof FaultConfig, { kind: Kind; nullable: boolean }> = {
  errorRate: { kind: "rate", nullable: false },
  errorStatus: { kind: "status", nullable: false },
  crashAfterRequests: { kind: "count", nullable: true },
  crashAtMs: { kind: "ms", nullable: true },
  restartAfterMs: { kind: "ms", nullable: true },
  stallAfterTokens: { kind: "count", nullable: true },
  stallMs: { kind: "ms", nullable: true },
  metricsDelayMs: { kind: "ms", nullable: false },
  metricsStale: { kind: "bool", nullable: false },
  metricsGarbage: { kind: "bool", nullable: false },
  healthFail: { kind: "bool", nullable: false },
  healthDelayMs: { kind: "ms", nullable: false },
  maxWaiting: { kind: "count", nullable: true },
  retryAfterSeconds: { kind: "seconds", nullable: false },
  slowdown: { kind: "factor", nullable: false },
};

/** Validates a partial fault update; returns the fields to apply or throws naming the bad field. */
export function parseFaultUpdate(body: unknown): Partial<FaultConfig> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Error("the fault update must be a JSON object");
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const spec = FIELDS[key as keyof FaultConfig];
    if (!spec) throw new Error(`unknown fault "${key}"; known: ${Object.keys(FIELDS).join(", ")}`);
    if (value === null) {
      if (!spec.nullable) throw new Error(`${key} cannot be null`);
      out[key] = null;
      continue;
    }
    const ok =
      spec.kind === "bool"
        ? typeof value === "boolean"
        : typeof value === "number" &&
          Number.isFinite(value) &&
          (spec.kind === "rate"
            ? value >= 0 && value <= 1
            : spec.kind === "status"
              ? Number.isInteger(value) && value >= 500 && value <= 599
              : spec.kind === "count"
                ? Number.isInteger(value) && value >= 0
                : spec.kind === "factor"
                  ? value >= 0.1 && value <= 100
                  : value >= 0);
    if (!ok) throw new Error(`${key}: invalid value ${JSON.stringify(value)} (${describe(spec.kind)})`);
    out[key] = value;
  }
  return out as Partial<FaultConfig>;
}

function describe(kind: Kind): string {
  switch (kind) {
    case "rate":
      return "a share between 0 and 1";
    case "status":
      return "an HTTP status from 500 to 599";
    case "count":
      return "a whole number ≥ 0";
    case "bool":
      return "true or false";
    case "factor":
      return "a factor from 0.1 to 100";
    default:
      return "a number ≥ 0";
  }
}
