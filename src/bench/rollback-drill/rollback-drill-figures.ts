// The rollback drill's figures, from what the load client saw and what the gateway logged: for each act,
// how long after the command every new request followed it, and which requests failed — those the bad
// version itself caused (they ran under it) and those the act caused (everything else: must be none).

/** One request of the steady load, joined with its gateway log line. */
export interface DrillRequest {
  /** performance.now() when the client sent it. */
  readonly startedAt: number;
  readonly ok: boolean;
  /** Why it failed, as the client saw it. */
  readonly failure: string | null;
  /** From the log line (null: no line came). */
  readonly configVersion: string | null;
  readonly pool: string | null;
  readonly endpoint: string | null;
  readonly modelVersion: string | null;
}

export interface DrillAct {
  readonly name: string;
  /** What the operator ran. */
  readonly command: string;
  /** performance.now() just before the command. */
  readonly at: number;
  /** The admin API's answer came back this long after `at`. */
  readonly commandMs: number;
  /** Whether a request follows the act. */
  readonly follows: (r: DrillRequest) => boolean;
  /** The version this act applies is the bad one: requests that fail under it are its own, not an act's. */
  readonly badVersion?: string;
}

export interface ActFigures {
  readonly name: string;
  readonly command: string;
  readonly commandMs: number;
  /** From the command until every request sent after it followed (0: the first one already did). */
  readonly effectiveMs: number;
  /** Requests sent between this act and the next. */
  readonly requests: number;
  readonly following: number;
  /** Failed while running under the bad version (caused by it, not by an act). */
  readonly failedByBadVersion: number;
  /** Failed for any other reason: the acts' own cost, to be zero. */
  readonly failedByAct: number;
  readonly failures: readonly string[];
}

export interface DrillFigures {
  readonly acts: readonly ActFigures[];
  readonly baseline: { readonly requests: number; readonly failed: number };
  /** From the first act's command until the last act had taken effect. */
  readonly drillMs: number;
  readonly targets: {
    readonly everyActWithinMs: number;
    readonly met: boolean;
    readonly noFailedRequestByAnAct: boolean;
  };
}

export const EFFECT_TARGET_MS = 1000;

/** `acts` in order; `endAt`: when the load stopped. */
export function drillFigures(
  requests: readonly DrillRequest[],
  acts: readonly DrillAct[],
  endAt: number,
): DrillFigures {
  const sorted = [...requests].sort((a, b) => a.startedAt - b.startedAt);
  const firstAt = acts[0]?.at ?? endAt;
  const badVersions = new Set(acts.flatMap((a) => (a.badVersion === undefined ? [] : [a.badVersion])));
  const baseline = sorted.filter((r) => r.startedAt < firstAt);
  const figures = acts.map((act, i) => {
    const until = acts[i + 1]?.at ?? endAt;
    const window = sorted.filter((r) => r.startedAt >= act.at && r.startedAt < until);
    let lastAstray = Number.NaN;
    let following = 0;
    for (const r of window) {
      if (act.follows(r)) following++;
      else lastAstray = r.startedAt;
    }
    // A failure is the bad version's own when the request ran under it; any other failure counts against
    // the act in whose window the request was sent (one cut by the next act's swap shows there too).
    const failed = window.filter((r) => !r.ok);
    const byBad = failed.filter((r) => r.configVersion !== null && badVersions.has(r.configVersion));
    const byAct = failed.filter((r) => !byBad.includes(r));
    return {
      name: act.name,
      command: act.command,
      commandMs: round(act.commandMs),
      effectiveMs: Number.isNaN(lastAstray) ? 0 : round(lastAstray - act.at),
      requests: window.length,
      following,
      failedByBadVersion: byBad.length,
      failedByAct: byAct.length,
      failures: byAct.map((r) => r.failure ?? "failed").slice(0, 10),
    };
  });
  const last = acts.at(-1);
  const lastFig = figures.at(-1);
  const drillMs =
    last && lastFig ? round(last.at + Math.max(lastFig.effectiveMs, lastFig.commandMs) - firstAt) : 0;
  const within = figures.every((f) => f.effectiveMs <= EFFECT_TARGET_MS);
  return {
    acts: figures,
    baseline: { requests: baseline.length, failed: baseline.filter((r) => !r.ok).length },
    drillMs,
    targets: {
      everyActWithinMs: EFFECT_TARGET_MS,
      met: within,
      noFailedRequestByAnAct: figures.every((f) => f.failedByAct === 0),
    },
  };
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

export function drillMarkdown(f: DrillFigures, setup: string): string {
  const rows = f.acts.map(
    (a) =>
      `| ${a.name} | \`${a.command}\` | ${a.commandMs} | ${a.effectiveMs} | ${a.following} / ${a.requests} | ${a.failedByBadVersion} | ${a.failedByAct} |`,
  );
  return `# Rollback drill

${setup}

| act | command | command answered (ms) | every new request follows after (ms) | following / sent | failed: the bad version's own | failed: because of the act |
|---|---|---|---|---|---|---|
${rows.join("\n")}

Before the first act: ${f.baseline.requests} requests, ${f.baseline.failed} failed. The whole drill, from
the first command to the last act in effect: ${(f.drillMs / 1000).toFixed(1)} s (seed 004's line: under 3 minutes).
Targets: every act in effect within ${f.targets.everyActWithinMs} ms — ${f.targets.met ? "met" : "NOT met"};
no request failed because of an act — ${f.targets.noFailedRequestByAnAct ? "met" : "NOT met"}.
${f.acts.some((a) => a.failures.length > 0) ? `\nFailures not caused by the bad version:\n${f.acts.flatMap((a) => a.failures.map((x) => `- ${a.name}: ${x}`)).join("\n")}\n` : ""}`;
}
