// The request pipeline's hooks seen from outside: a plugin registered on a real gateway in front of
// simulated engines sees, for every exit path of a request through either front door (the OpenAI API,
// the EPP), each attempt begun, undone and ended exactly once, and the request settled exactly once.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { GatewayEppPicker } from "../server/epp-picker.js";
import { openaiClient, type Platform, suitePlatforms } from "../testing/platform.js";
import type { HookFactory } from "./plugins/hook-factory.js";

const LIVE = { "x-ai-task": "live_ticket_summary", "x-ai-request-class": "interactive" };

/** What the recording plugin saw of one request, by trace id. */
interface Seen {
  begun: string[];
  undone: number;
  ended: string[];
  settled: number;
  status: string;
}

function recorder(): { hook: HookFactory; seen: Map<string, Seen> } {
  const seen = new Map<string, Seen>();
  const of = (traceId: string) => {
    let s = seen.get(traceId);
    if (!s) {
      s = { begun: [], undone: 0, ended: [], settled: 0, status: "" };
      seen.set(traceId, s);
    }
    return s;
  };
  const hook: HookFactory = () => ({
    name: "test-recorder",
    attempt: (a) => {
      const s = of(a.rec.traceId);
      s.begun.push(a.endpoint.name);
      return () => {
        s.undone++;
      };
    },
    attemptEnd: (a, end) => {
      of(a.rec.traceId).ended.push(end.kind === "failed" ? `failed:${end.failure}` : end.kind);
    },
    settle: (rec) => {
      const s = of(rec.traceId);
      s.settled++;
      s.status = rec.status;
    },
  });
  return { hook, seen };
}

/** Waits until the request with this trace id has settled (its log line follows at once). */
async function settledOnce(seen: Map<string, Seen>, traceId: string): Promise<Seen> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 10)))
    if ((seen.get(traceId)?.settled ?? 0) > 0) break;
  await new Promise((r) => setTimeout(r, 50)); // long enough for a second settle to show
  const s = seen.get(traceId);
  assert.ok(s, `request ${traceId} was seen by the hooks`);
  assert.equal(s.settled, 1, "settled exactly once");
  assert.equal(s.undone, s.begun.length, "every attempt's hooks undone");
  assert.equal(s.ended.length, s.begun.length, "every attempt ended");
  return s;
}

function assertNothingHeld(p: Platform): void {
  for (const pool of p.gateway.pools.values())
    for (const e of pool.endpoints) {
      assert.equal(e.inflightRequests, 0, `${e.name}: no request counted in flight`);
      assert.equal(e.prefill.held(), null, `${e.name}: nothing held in the prefill view`);
    }
}

describe("the request pipeline's hooks, through both front doors", () => {
  const platforms = suitePlatforms();
  after(platforms.stopAll);

  it("an answered request: one attempt, answered, settled once", async () => {
    const { hook, seen } = recorder();
    const p = await platforms.start({ online: 2, hooks: [hook] });
    const { response } = await openaiClient(p, LIVE)
      .chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "summarise" }],
        max_tokens: 8,
      })
      .withResponse();
    const s = await settledOnce(seen, response.headers.get("x-ai-trace-id")!);
    assert.deepEqual(s.begun, [response.headers.get("x-ai-endpoint")]);
    assert.deepEqual(s.ended, ["answered"]);
    assert.equal(s.status, "ok");
    assertNothingHeld(p);
  });

  it("a request every engine fails: each attempt ends failed, then the error is settled once", async () => {
    const { hook, seen } = recorder();
    const p = await platforms.start({ online: 2, hooks: [hook] });
    for (const r of p.replicas.online) r.setFaults({ errorRate: 1, errorStatus: 500 });
    const err = await openaiClient(p, LIVE)
      .chat.completions.create({
        model: "summary-default",
        messages: [{ role: "user", content: "summarise" }],
        max_tokens: 8,
      })
      .catch((e: unknown) => e);
    assert.equal((err as { code?: string }).code, "upstream_unavailable");
    const traceId = (err as { headers: Headers }).headers.get("x-ai-trace-id")!;
    const s = await settledOnce(seen, traceId);
    assert.ok(s.begun.length >= 2, `retried on another engine (${s.begun.join(", ")})`);
    assert.equal(new Set(s.begun).size, s.begun.length, "never the same engine twice");
    assert.deepEqual(
      s.ended,
      s.begun.map(() => "failed:500"),
    );
    assert.equal(s.status, "error");
    assertNothingHeld(p);
  });

  it("a stream the client leaves: its attempt ends cancelled, settled once", async () => {
    const { hook, seen } = recorder();
    const p = await platforms.start({ online: 1, hooks: [hook] });
    p.replicas.online[0]!.setFaults({ stallAfterTokens: 2, stallMs: null });
    const abort = new AbortController();
    const { data: stream, response } = await openaiClient(p, LIVE)
      .chat.completions.create(
        {
          model: "summary-default",
          messages: [{ role: "user", content: "summarise" }],
          max_tokens: 100,
          stream: true,
        },
        { signal: abort.signal },
      )
      .withResponse();
    try {
      for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) abort.abort();
    } catch {
      // The openai client may end an aborted stream with an error or quietly.
    }
    const s = await settledOnce(seen, response.headers.get("x-ai-trace-id")!);
    assert.deepEqual(s.ended, ["cancelled"]);
    assert.equal(s.status, "client_cancelled");
    assertNothingHeld(p);
  });

  it("a request refused before any engine: no attempt, settled once", async () => {
    const { hook, seen } = recorder();
    const p = await platforms.start({ online: 1, hooks: [hook] });
    const err = await openaiClient(p, LIVE)
      .chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    const traceId = (err as { headers: Headers }).headers.get("x-ai-trace-id")!;
    const s = await settledOnce(seen, traceId);
    assert.deepEqual(s.begun, []);
    assert.equal(s.status, "rejected");
  });

  it("the EPP door: the same hooks for a routed request and a refused one", async () => {
    const { hook, seen } = recorder();
    const p = await platforms.start({ online: 2, hooks: [hook] });
    const picker = new GatewayEppPicker(p.gateway);
    const body = Buffer.from(
      JSON.stringify({
        model: "summary-default",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4,
      }),
    );
    const headers = {
      ":method": "POST",
      ":path": "/v1/chat/completions",
      authorization: "Bearer sk-test-basic",
      "content-type": "application/json",
      ...LIVE,
    };
    const routed = await picker.decide({ headers, body, subset: null }, new AbortController().signal);
    assert.equal(routed.kind, "route");
    if (routed.kind !== "route") return;
    const traceId = routed.headers!["x-ai-trace-id"]!;
    assert.equal(seen.get(traceId)?.begun.length, 1, "the attempt begins when Envoy is told where to go");
    assert.equal(seen.get(traceId)?.settled, 0);
    const usage = '{"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}';
    routed.responseBody?.(Buffer.from(usage), true);
    routed.done(routed.endpoint, 200);
    const s = await settledOnce(seen, traceId);
    assert.deepEqual(s.ended, ["answered"]);
    assert.equal(s.status, "ok");
    assertNothingHeld(p);

    const refused = await picker.decide(
      { headers: { ...headers, ":path": "/v1/embeddings" }, body, subset: null },
      new AbortController().signal,
    );
    assert.equal(refused.kind, "refuse");
    const last = [...seen.values()].at(-1)!;
    assert.deepEqual(last.begun, []);
    assert.equal(last.settled, 1);
    assert.equal(last.status, "rejected");
  });
});
