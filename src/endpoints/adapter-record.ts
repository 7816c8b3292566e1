// The gateway's own record of which LoRA adapters an engine probably holds on its GPU. vLLM reports only
// adapters with requests running or waiting (`vllm:lora_requests_info`); an adapter that finished its
// last request stays loaded until a newer one evicts it (least recently used, `--max-loras` slots). So
// the gateway remembers the adapters it sent to each engine, most recent last, as many as it has slots:
// an adapter on that list is likely still resident, and a request for it loads nothing.

/** Used while the engine has not reported `max_lora` yet. */
const DEFAULT_SLOTS = 1;

/**
 * A slot being freed for an adapter that has none: no new request for `evicting` goes to this engine
 * until `adapter` runs here or `until` passes, so `evicting`'s requests drain and vLLM can load
 * `adapter` in its place (adapter-room.ts).
 */
export interface SlotReservation {
  readonly adapter: string;
  readonly evicting: string;
  readonly until: number;
}

export class AdapterRecord {
  private readonly order: string[] = [];
  /** Requests the gateway has in flight on this engine, per adapter. */
  private readonly inflight = new Map<string, number>();
  private reservation: SlotReservation | null = null;

  /** The slot being freed on this engine, while it lasts (it ends when its adapter runs here). */
  reserved(now: number): SlotReservation | null {
    const r = this.reservation;
    if (r === null) return null;
    if (now >= r.until || this.inflight.has(r.adapter)) {
      this.reservation = null;
      return null;
    }
    return r;
  }

  reserve(r: SlotReservation): void {
    this.reservation = r;
  }

  /** The gateway's own requests in flight here for `adapter`. */
  inflightOf(adapter: string): number {
    return this.inflight.get(adapter) ?? 0;
  }

  /** A request for `adapter` is on its way to this engine; `ended` when it is over. */
  began(adapter: string): void {
    this.inflight.set(adapter, (this.inflight.get(adapter) ?? 0) + 1);
  }

  ended(adapter: string): void {
    const n = (this.inflight.get(adapter) ?? 0) - 1;
    if (n > 0) this.inflight.set(adapter, n);
    else this.inflight.delete(adapter);
  }

  /** Adapters with the gateway's own requests running here now (the last scrape may not show them yet). */
  active(): IterableIterator<string> {
    return this.inflight.keys();
  }

  isActive(adapter: string): boolean {
    return this.inflight.has(adapter);
  }

  /** A request for `adapter` was sent; it is now the most recently used. */
  sent(adapter: string, slots: number | null): void {
    const i = this.order.indexOf(adapter);
    if (i >= 0) this.order.splice(i, 1);
    this.order.push(adapter);
    const keep = Math.max(1, slots ?? DEFAULT_SLOTS);
    if (this.order.length > keep) this.order.splice(0, this.order.length - keep);
  }

  /** Probably still on the GPU: among the last `slots` adapters sent. */
  likelyResident(adapter: string): boolean {
    return this.order.includes(adapter);
  }

  /** The engine restarted or was reset: nothing it held survives (requests in flight end on their own). */
  clear(): void {
    this.order.length = 0;
    this.reservation = null;
  }

  list(): readonly string[] {
    return this.order;
  }
}
