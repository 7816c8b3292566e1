// One request's ticket for its pool's flow control: what the queue orders it by, and how it is placed
// on an endpoint once there is room.
//
// A class, not an object literal: a literal with a getter (`get signal() { … }`) gives each object a
// hidden class of its own whose accessor closure holds the whole request; those hidden classes live in
// the old generation, so every request's objects survived the young-generation collections until the
// next full one. At 1,000 req/s that was ~1 MB promoted per collection and 5–7 ms collections (the
// gateway's p99); with the accessor on the prototype, nothing is promoted and they take ~1 ms.

import { isHot, makeRoomFor, ROOM_AFTER_MS } from "../endpoints/adapter-room.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { ClientGone } from "../http/client-gone.js";
import type { PickRequest, PickResult } from "../picker/framework/types.js";
import type { LongPrefillGuard } from "./long-prefill.js";
import type { PickAmong, Placement } from "./placement.js";
import type { FlowTicket } from "./pool-flow.js";
import { placeable, type SaturationBounds } from "./saturation.js";

/**
 * Why a try to place a request failed: every candidate over its saturation bounds (or the predicted-wait
 * bound), the long-prefill guard held it, or no candidate the picker would take.
 */
export type QueueHold = "saturated" | "long_prefill" | "no_match";

/** The queue's view of a ticket: its order and its refusal options. */
type TicketFields = Omit<FlowTicket<Placement>, "signal" | "place">;

export interface RequestTicketInit extends TicketFields {
  readonly endpoints: readonly EndpointState[];
  readonly bounds: SaturationBounds & { readonly enabled: boolean };
  /** The pool's long-prefill guard (flow/long-prefill.ts); absent: none. */
  readonly longPrefill?: LongPrefillGuard;
  readonly pickAmong: PickAmong;
  readonly clientGone: ClientGone;
  /** A stream shows its first token, which ends its prefill in the endpoint's view. */
  readonly stream: boolean;
  /** What the picker reads of the request: its model, version and adapter decide its matchKey. */
  readonly pickRequest: Pick<PickRequest, "model" | "modelVersion" | "lora">;
}

/**
 * Claims the picked endpoint for the request: its in-flight counters (`cost` tokens, `prompt` of them the
 * prompt's) and its prefill view (the prompt tokens the pick found uncached there).
 */
export function placeOn(
  pick: PickResult<EndpointState>,
  cost: number,
  stream: boolean,
  prompt: number,
  adapter: string | null,
): Placement | null {
  const endpoint = pick.endpoint;
  if (!endpoint) return null;
  const uncached = pick.uncachedTokens ?? 0;
  const lease = endpoint.acquire(cost, { uncached, stream, prompt, adapter });
  return { endpoint, lease, pick };
}

export class RequestTicket implements FlowTicket<Placement> {
  readonly priority: number;
  readonly tenant: string;
  readonly cost: number;
  readonly work: number;
  readonly maxQueueMs: number;
  readonly gate: FlowTicket<Placement>["gate"];
  readonly fallbackOptions: readonly string[];
  lastMiss: "full" | "no_match" | null = null;
  /** Why the last try held it back as a long prompt (flow/long-prefill.ts), or null. */
  heldLong: string | null = null;
  /** Why the last try that failed to place it failed (the log's `gateway_queue_reason`), or null. */
  heldBy: QueueHold | null = null;
  /**
   * While it waited in the gateway queue, the longest any one of its candidate endpoints had none of
   * this gateway's prefill (PrefillLoad.idleMsUntil), in ms: an engine idle while the gateway held a
   * request. Null until it has waited and been placed.
   */
  heldWhileIdleMs: number | null = null;

  /**
   * Why it waited, for the log's `gateway_queue_reason`: `paused` when its rule's batch pause held it (paused
   * when it came, or paused at some point while it waited, `queuedAt` on performance.now()'s clock), else
   * why the last try to place it failed, else its turn in the queue's order.
   */
  waitReason(queuedAt: number, pausedAtAdmit: boolean): QueueHold | "paused" | "queue_order" {
    if (pausedAtAdmit || (this.gate !== null && this.gate.changedAt >= queuedAt)) return "paused";
    return this.heldBy ?? "queue_order";
  }
  private readonly init: RequestTicketInit;
  private readonly since = Date.now();
  /** Each candidate's idle ms when it started to wait; null: it has not waited. */
  private idleAtQueue: number[] | null = null;

  constructor(init: RequestTicketInit) {
    this.priority = init.priority;
    this.tenant = init.tenant;
    this.cost = init.cost;
    this.work = init.work ?? 0;
    this.maxQueueMs = init.maxQueueMs;
    this.gate = init.gate;
    this.fallbackOptions = init.fallbackOptions;
    this.init = init;
  }

  /**
   * Served model, version and adapter: the filters that can refuse it (FlowTicket.matchKey). Built only
   * for a request the queue passes over.
   */
  get matchKey(): string {
    const r = this.init.pickRequest;
    return `${r.model}|${r.modelVersion ?? ""}|${r.lora ?? ""}${this.heldLong === null ? "" : "|long"}`;
  }

  /** Made only for a request that has to wait in the queue. */
  get signal(): AbortSignal {
    return this.init.clientGone.signal;
  }

  place(): Placement | null {
    return this.noteIdle(this.placeWithin(true));
  }

  /** At the queue deadline: any endpoint within the hard bounds (FlowTicket.placeAtDeadline). */
  placeAtDeadline(): Placement | null {
    return this.noteIdle(this.placeWithin(false));
  }

  /** It starts to wait: the candidates' idle clocks now (FlowTicket.onQueued). */
  onQueued(): void {
    const now = Date.now();
    this.idleAtQueue = this.init.endpoints.map((e) => e.prefill.idleMsUntil(now));
  }

  /** Placed after a wait: how long the idlest candidate idled meanwhile (heldWhileIdleMs). */
  private noteIdle(placed: Placement | null): Placement | null {
    const before = this.idleAtQueue;
    if (placed === null || before === null) return placed;
    const now = Date.now();
    let most = 0;
    this.init.endpoints.forEach((e, i) => {
      most = Math.max(most, e.prefill.idleMsUntil(now) - before[i]!);
    });
    this.heldWhileIdleMs = most;
    return placed;
  }

  private placeWithin(soft: boolean): Placement | null {
    const { endpoints, bounds, cost, pickAmong } = this.init;
    const roomy = bounds.enabled ? placeable(endpoints, bounds, cost, Date.now(), soft) : endpoints;
    if (roomy === null || roomy.length === 0) {
      this.lastMiss = "full";
      this.heldBy = "saturated";
      return null;
    }
    const pick = pickAmong(roomy);
    const guard = this.init.longPrefill;
    this.heldLong =
      soft && guard && pick.endpoint
        ? guard.holds(endpoints, pick.endpoint, pick.uncachedTokens ?? 0, Date.now())
        : null;
    const placed =
      this.heldLong === null
        ? placeOn(pick, cost, this.init.stream, this.work, this.init.pickRequest.lora)
        : null;
    this.lastMiss = placed === null ? "no_match" : null;
    if (placed === null) this.heldBy = this.heldLong === null ? "no_match" : "long_prefill";
    const adapter = this.init.pickRequest.lora;
    if (adapter !== null) this.roomForAdapter(adapter, placed);
    return placed;
  }

  /**
   * Frees a slot for the request's adapter (endpoints/adapter-room.ts) when it has waited ROOM_AFTER_MS
   * for one, or when the engine it was just placed on is far busier than one that lacks it.
   */
  private roomForAdapter(adapter: string, placed: Placement | null): void {
    const now = Date.now();
    const waited = now - this.since;
    let why: string;
    if (placed === null) {
      if (waited < ROOM_AFTER_MS) return;
      why = "no_slot";
    } else {
      if (!isHot(adapter, placed.endpoint, this.init.endpoints, now)) return;
      why = "hot";
    }
    const room = makeRoomFor(adapter, this.init.endpoints, now);
    room?.endpoint.onEvent?.("endpoint.adapter-slot-reserved", {
      adapter,
      evicting: room.evicting,
      why,
      waited_ms: waited,
    });
  }
}
