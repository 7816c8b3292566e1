// Fuzzes the profile and plan stages with fast-check: arbitrary JSON bodies (every field possibly of the
// wrong type, prototype keys, deep arrays, odd unicode, huge numbers) and random X-AI-* headers. Either
// a plan comes out, whose upstream body is a JSON object the engine can read, or a GatewayError from the
// catalogue with a 4xx status whose `param` names a field of the request. Nothing else may escape: any
// other throw would be a 500 on the request path. Fixed seeds, so a failure replays.

import assert from "node:assert/strict";
import type { IncomingHttpHeaders } from "node:http";
import { describe, it } from "node:test";
import fc from "fast-check";
import { loadConfigTexts } from "../config/loader.js";
import { errorCatalogue, GatewayError } from "../errors/gateway-error.js";
import type { ApiKind } from "../profile/request-profile.js";
import { TokenCorrection } from "../profile/token-correction.js";
import { aiHeaders, anyJson, chatBody, completionBody, type Json } from "../testing/request-arbitraries.js";
import { planRequest } from "./request-plan.js";

const POOLS = `
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: online }
spec:
  engine: vllm
  model: summary-7b
  modelVersion: summary-7b-v1
  endpoints: ["http://127.0.0.1:9"]
  loraAdapters: [tone-a, tone-b]
---
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: long }
spec: { engine: vllm, model: summary-14b-long, endpoints: ["http://127.0.0.1:10"] }
---
apiVersion: ai.example.com/v1alpha1
kind: InferencePool
metadata: { name: batch }
spec: { engine: vllm, model: summary-14b-long, endpoints: ["http://127.0.0.1:11"] }
`;

const ROUTE = `
apiVersion: ai.example.com/v1alpha1
kind: InferenceRoute
metadata: { name: r, annotations: { ai.example.com/route-config-version: "fuzz-r1" } }
spec:
  knownTasks: ["batch_recompute_summary"]
  modelAliases:
    summary-default:
      defaultPool: online
      pools:
        - { name: online, maxInputTokens: 8192, maxOutputTokens: 600, priority: 100 }
        - { name: long, minInputTokens: 8193, maxInputTokens: 65536, maxOutputTokens: 2200 }
        - { name: batch, maxInputTokens: 65536, maxOutputTokens: 2200, priority: 10 }
    split:
      defaultPool: online
      pools: [{ name: online, maxInputTokens: 8192, maxOutputTokens: 600 }]
      targets: [{ adapter: tone-a, weight: 50 }, { adapter: tone-b, weight: 50 }]
      stickyBy: header:x-user-id
    strict:
      defaultPool: online
      pools: [{ name: online, minInputTokens: 2, maxInputTokens: 60, maxOutputTokens: 16, outputTokensPolicy: reject }]
  rules:
    - name: live-summary-short
      when: { taskIn: ["live_ticket_summary", "agent_assist_summary"], inputTokensLte: 8192 }
      routeTo: online
    - name: live-summary-long
      when: { taskIn: ["live_ticket_summary"], inputTokensGt: 8192 }
      routeTo: long
    - name: quality-batch
      when: { requestClass: batch }
      routeTo: batch
`;

const loaded = loadConfigTexts({ "pools.yaml": POOLS, "route.yaml": ROUTE });
if (!loaded.ok) throw new Error(loaded.errors.map((e) => `${e.path}: ${e.message}`).join("\n"));
const CONFIG = loaded.config;
const CODES = new Set(errorCatalogue().map((e) => e.code));

/** The request fields a `param` may name (a header, or a path into the body). */
const BODY_FIELDS = new Set([
  "body",
  "model",
  "messages",
  "prompt",
  "max_tokens",
  "max_completion_tokens",
  "stream",
  "stream_options",
  "metadata",
  "task",
  "request_class",
]);
const HEADER_PARAMS = new Set(["x-ai-task", "x-ai-request-class"]);

/** `messages[0].content[1]` → ["messages", 0, "content", 1]; null when it is not such a path. */
function pathOf(param: string): (string | number)[] | null {
  if (!/^[A-Za-z_]+(\.[A-Za-z_]+|\[\d+\])*$/.test(param)) return null;
  return [...param.matchAll(/([A-Za-z_]+)|\[(\d+)\]/g)].map((m) =>
    m[1] !== undefined ? m[1] : Number(m[2]),
  );
}

/**
 * Whether `param` names a field of this request: a routing header it sent, or a body path whose parent
 * exists; the field itself may be the one missing, unless `present` (a refusal over a value sent).
 */
function namesAField(param: string, body: unknown, headers: IncomingHttpHeaders, present: boolean): boolean {
  if (HEADER_PARAMS.has(param)) return headers[param] !== undefined;
  if (param === "body") return true;
  const path = pathOf(param);
  if (path === null || !BODY_FIELDS.has(String(path[0]))) return false;
  let node: unknown = body;
  for (const seg of path.slice(0, -1)) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, seg)) return false;
    node = (node as Record<string | number, unknown>)[seg];
  }
  return typeof node === "object" && node !== null && (!present || Object.hasOwn(node, path.at(-1)!));
}

/** Plans one request; returns the plan or the GatewayError, and fails on anything else thrown. */
function attempt(kind: ApiKind, value: Json, headers: IncomingHttpHeaders) {
  // What the gateway sees: the bytes a client sends, parsed.
  const body: unknown = JSON.parse(JSON.stringify(value));
  try {
    return { body, plan: planRequest(CONFIG, new TokenCorrection(), { kind, body, headers, tenant: "t" }) };
  } catch (err) {
    if (!(err instanceof GatewayError)) {
      assert.fail(`a ${(err as Error).constructor.name} escaped: ${(err as Error).stack}`);
    }
    return { body, error: err };
  }
}

function checkOutcome(kind: ApiKind, value: Json, headers: IncomingHttpHeaders): void {
  const { body, plan, error } = attempt(kind, value, headers);
  if (error) {
    assert.ok(CODES.has(error.code), `code ${error.code} is in the catalogue`);
    assert.ok(error.status >= 400 && error.status < 500, `${error.code}: status ${error.status} is a 4xx`);
    assert.ok(error.message.length > 0 && error.message.length < 2000, "a short message");
    assert.ok(JSON.parse(error.body("t")).error.code === error.code, "the body is JSON");
    if (error.code === "invalid_request" || error.param !== null) {
      assert.ok(error.param !== null, `${error.code} names its param (${error.message})`);
      assert.ok(
        namesAField(error.param, body, headers, error.code !== "invalid_request"),
        `param ${error.param} names a field of the request (${error.message})`,
      );
    }
    return;
  }
  assert.ok(plan);
  const sent = JSON.parse(plan.upstreamBody.toString("utf8")) as Record<string, unknown>;
  assert.equal(typeof sent.model, "string");
  assert.ok(Number.isInteger(sent.max_tokens) && (sent.max_tokens as number) >= 1, "max_tokens upstream");
  assert.equal("max_completion_tokens" in sent, false);
  assert.ok(Number.isFinite(plan.cost) && plan.cost > 0, `cost ${plan.cost}`);
  assert.ok(Number.isFinite(plan.profile.inputTokensRaw) && plan.profile.inputTokensRaw >= 0);
  assert.equal(Object.getPrototypeOf(plan.profile.body), Object.prototype, "the body stays plain data");
}

const RUNS = { numRuns: 1500, seed: 0x12f0220, includeErrorInReport: true };

describe("profile and plan, fuzzed", () => {
  it("a chat body of any shape is planned or refused with a 4xx naming the field at fault", () => {
    fc.assert(
      fc.property(chatBody, aiHeaders, (body, headers) => checkOutcome("chat", body, headers)),
      RUNS,
    );
  });

  it("a completion body of any shape is planned or refused with a 4xx naming the field at fault", () => {
    fc.assert(
      fc.property(completionBody, aiHeaders, (body, headers) => checkOutcome("completion", body, headers)),
      { ...RUNS, seed: RUNS.seed + 1 },
    );
  });

  it("one wrong field in a valid request is refused naming that field, or ignored", () => {
    const messages: Json = [{ role: "user", content: "Summarise the ticket." }];
    const valid: { kind: ApiKind; body: Record<string, Json> }[] = [
      {
        kind: "chat",
        body: {
          model: "summary-default",
          messages,
          max_tokens: 20,
          stream: true,
          stream_options: { include_usage: true },
          metadata: { task: "live_ticket_summary" },
        },
      },
      // Under the strict alias (at most 60 input and 16 output tokens, refused above) a number too large
      // or a prompt too long is refused: by the name of the field the caller sent.
      { kind: "chat", body: { model: "strict", messages, max_completion_tokens: 10 } },
      {
        kind: "completion",
        body: { model: "summary-default", prompt: "Summarise.", max_tokens: 20, stream: false },
      },
      { kind: "completion", body: { model: "strict", prompt: "Summarise the ticket.", max_tokens: 10 } },
    ];
    const wrongValue = fc.oneof(
      { weight: 4, arbitrary: anyJson },
      { weight: 1, arbitrary: fc.integer({ min: 17, max: 100_000 }) },
      { weight: 1, arbitrary: fc.lorem({ mode: "sentences", maxCount: 12 }) },
    );
    const fault = fc
      .nat(valid.length - 1)
      .chain((i) =>
        fc.tuple(fc.constant(i), fc.constantFrom(...Object.keys(valid[i]!.body)), wrongValue, fc.nat(3)),
      );
    fc.assert(
      fc.property(fault, ([i, field, wrong, depth]) => {
        const k = valid[i]!.kind;
        const body = structuredClone(valid[i]!.body);
        // The wrong value replaces the field itself, or a value nested in it (messages[0].content, …).
        let at: any = body;
        let key = field;
        for (let d = 0; d < depth && typeof at[key] === "object" && at[key] !== null; d++) {
          const inner = at[key];
          const keys = Object.keys(inner);
          if (keys.length === 0) break;
          at = inner;
          key = keys[0]!;
        }
        at[key] = wrong;
        const { error } = attempt(k, body, {});
        if (!error) return;
        assert.ok(error.status >= 400 && error.status < 500, `${error.code}: status ${error.status}`);
        const top = error.param?.split(/[.[]/)[0];
        // A refusal over size names what carries the input (messages or prompt); else the field itself.
        const sized = error.code === "context_length_exceeded" || error.code === "no_eligible_pool";
        assert.ok(
          sized ? top === (k === "chat" ? "messages" : "prompt") : top === field,
          `${field} = ${JSON.stringify(wrong)?.slice(0, 200)}: refused with ${error.code} naming ${error.param}`,
        );
      }),
      { ...RUNS, numRuns: 1000, seed: RUNS.seed + 2 },
    );
  });
});
