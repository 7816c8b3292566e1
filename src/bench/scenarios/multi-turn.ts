// Chat sessions whose context grows turn by turn: each turn resends the whole conversation, so a router
// that keeps a session on one replica lets the engine reuse the cached history instead of prefilling it.

import type { TraceRequest } from "../trace-formats/trace.js";
import { arrivalsWithCount, randomStream, uniformInt } from "../workload/distributions.js";
import { fleetGpus, fleetOf, replicaGroup } from "./fleet-group.js";
import { onePoolGatewayConfig } from "./gateway-yaml.js";
import type { GenerateOptions } from "./scenario.js";
import type { ScenarioPhase, ShippedScenario } from "./shipped.js";

// A session lasts ~15 s (6 turns of ~1.2 s replies and ~1.25 s think time), so 192 sessions starting
// over ~140 s keep ~20 sessions (~8 req/s) going; its last turn carries ~2,600 tokens of history. The
// lead tunes SESSIONS against the simulator; the shape follows inference-perf's multi-turn shared_prefix.

const SESSIONS = 192;
const TURNS = 6;
const DURATION_S = 150;
const QUICK_SESSIONS = 24;
const QUICK_TURNS = 4;
const QUICK_DURATION_S = 12;

/** Each session's own system prompt: its prefix group. */
const SYSTEM_TOKENS = 600;
const USER_TOKENS = { min: 80, max: 300 };
const OUTPUT_TOKENS = { min: 100, max: 250 };
const THINK_MS = { min: 500, max: 2000 };
const TASK = "chat_session";
const MODEL = "llama-3.1-8b";

const fleet = fleetOf("multi-turn", [
  replicaGroup("engines", 4, "h100-llama8b", MODEL, { maxModelLen: 32_768 }),
]);

function shape(opts: GenerateOptions): { sessions: number; turns: number; durationS: number } {
  if (opts.quick) {
    const durationS = opts.durationS ?? QUICK_DURATION_S;
    return {
      sessions: Math.max(1, Math.round((QUICK_SESSIONS * durationS) / QUICK_DURATION_S)),
      turns: QUICK_TURNS,
      durationS,
    };
  }
  const durationS = opts.durationS ?? DURATION_S;
  return { sessions: Math.max(1, Math.round((SESSIONS * durationS) / DURATION_S)), turns: TURNS, durationS };
}

function phases(opts: GenerateOptions): ScenarioPhase[] {
  return [{ name: "steady", startS: 0, endS: shape(opts).durationS }];
}

function generate(opts: GenerateOptions): TraceRequest[] {
  const { sessions, turns, durationS } = shape(opts);
  const rs = (purpose: string) => randomStream(opts.seed, `multi-turn:${purpose}`);
  const sizes = rs("sizes");
  const think = rs("think");
  // Sessions start early enough that even their last turn's earliest send time is inside the run.
  const lastStartMs = Math.max(0, durationS * 1000 - (turns - 1) * THINK_MS.max);
  const out: TraceRequest[] = [];
  arrivalsWithCount(sessions, 0, lastStartMs, rs("starts")).forEach((start, s) => {
    const session = `chat-${String(s + 1).padStart(4, "0")}`;
    let t = start;
    for (let turn = 1; turn <= turns; turn++) {
      const thinkMs = turn === 1 ? 0 : uniformInt(think, THINK_MS.min, THINK_MS.max);
      t += thinkMs;
      out.push({
        t_ms: Math.floor(t),
        id: `${session}-t${turn}`,
        tenant: "bench",
        task: TASK,
        request_class: "interactive",
        input_tokens: uniformInt(sizes, USER_TOKENS.min, USER_TOKENS.max),
        prefix_group: session,
        prefix_tokens: SYSTEM_TOKENS,
        lang: "en",
        max_tokens: uniformInt(sizes, OUTPUT_TOKENS.min, OUTPUT_TOKENS.max),
        stream: true,
        session,
        turn,
        ...(turn === 1 ? {} : { think_ms: thinkMs }),
      });
    }
  });
  return out.sort((a, b) => a.t_ms - b.t_ms);
}

export const multiTurn: ShippedScenario = {
  name: "multi-turn",
  description:
    `${SESSIONS} chat sessions × ${TURNS} turns, each turn resending the conversation so far ` +
    `(${SYSTEM_TOKENS}-token system prompt per session), over 4 × h100-llama8b`,
  liveClass: "interactive",
  longClass: null,
  topologies: [
    {
      name: "4-replicas",
      description: "4 replicas of Llama-3.1-8B, one H100 each",
      fleet,
      gpus: fleetGpus(fleet),
      routers: ["tokengate", "least-request", "round-robin"],
      gatewayConfig: (endpoints) =>
        onePoolGatewayConfig(
          {
            group: fleet.groups[0]!,
            version: "multi-turn-r1",
            knownTasks: [TASK],
            maxInputTokens: 32_768,
            maxOutputTokens: 4096,
          },
          endpoints,
        ),
    },
  ],
  phases,
  generate,
};
