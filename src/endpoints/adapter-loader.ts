// Registers a LoRA adapter on an engine that does not list it, before the first request for it there:
// `POST /v1/load_lora_adapter {lora_name, lora_path}`, as vLLM serves it with
// VLLM_ALLOW_RUNTIME_LORA_UPDATING. A pool declares where each adapter loads from
// (`loraAdapters: [{name, path}]`); an engine added to the pool later, or restarted, then serves every
// adapter without being started with all of them. One load per engine and adapter is in flight at once;
// requests that arrive meanwhile wait for it.

import type { Dispatcher } from "undici";
import type { EndpointState } from "./endpoint-state.js";

export type AdapterLoad = { readonly ok: true } | { readonly ok: false; readonly detail: string };

/** How long a load may take before the request goes elsewhere. */
const LOAD_TIMEOUT_MS = 30_000;

export class AdapterLoader {
  private readonly pending = new Map<string, Promise<AdapterLoad>>();

  /** `onRegistered` hears of each registration once (however many requests waited for it). */
  constructor(private readonly onRegistered: (ep: EndpointState, adapter: string) => void = () => {}) {}

  /** Resolves once `adapter` is registered on `ep` (at once when it already is). */
  ensure(
    dispatcher: Dispatcher,
    ep: EndpointState,
    adapter: string,
    path: string,
  ): Promise<AdapterLoad> | null {
    if (ep.servedAdapters === null || ep.servedAdapters.has(adapter)) return null;
    const key = `${ep.url}\u0000${adapter}`;
    let p = this.pending.get(key);
    if (p === undefined) {
      p = load(dispatcher, ep, adapter, path)
        .then((r) => {
          if (r.ok) this.onRegistered(ep, adapter);
          return r;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, p);
    }
    return p;
  }
}

async function load(
  dispatcher: Dispatcher,
  ep: EndpointState,
  adapter: string,
  path: string,
): Promise<AdapterLoad> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (ep.authorization !== null) headers.authorization = ep.authorization;
  try {
    const res = await dispatcher.request({
      origin: ep.url,
      path: "/v1/load_lora_adapter",
      method: "POST",
      headers,
      body: JSON.stringify({ lora_name: adapter, lora_path: path }),
      signal: AbortSignal.timeout(LOAD_TIMEOUT_MS),
    });
    const text = await res.body.text();
    // vLLM answers 400 when the name is already registered (another gateway replica loaded it first).
    const already = res.statusCode === 400 && /already been loaded/.test(text);
    if (res.statusCode !== 200 && !already) {
      return {
        ok: false,
        detail: `load_lora_adapter ${adapter}: HTTP ${res.statusCode} ${text.slice(0, 200)}`,
      };
    }
    ep.servedAdapters = new Set([...(ep.servedAdapters ?? []), adapter]);
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: `load_lora_adapter ${adapter}: ${(err as Error).message}` };
  }
}
