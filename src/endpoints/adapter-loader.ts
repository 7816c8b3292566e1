// Registers a LoRA adapter on an engine that does not list it, before the first request for it there,
// through its dialect's runtime LoRA API (engines/: vLLM's `POST /v1/load_lora_adapter`, SGLang's
// `POST /load_lora_adapter`, both `{lora_name, lora_path}`). A pool declares where each adapter loads from
// (`loraAdapters: [{name, path}]`); an engine added to the pool later, or restarted, then serves every
// adapter without being started with all of them. One load per engine and adapter is in flight at once;
// requests that arrive meanwhile wait for it.

import type { Dispatcher } from "undici";
import { DIALECTS } from "../engines/dialects.js";
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
  const api = DIALECTS[ep.dialect].adapters;
  if (api === null)
    return { ok: false, detail: `${ep.dialect} engines cannot register adapter ${adapter} at run time` };
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (ep.authorization !== null) headers.authorization = ep.authorization;
  try {
    const res = await dispatcher.request({
      origin: ep.url,
      path: api.loadPath,
      method: "POST",
      headers,
      body: JSON.stringify(api.loadBody(adapter, path)),
      signal: AbortSignal.timeout(LOAD_TIMEOUT_MS),
    });
    const text = await res.body.text();
    // Already registered: another gateway replica loaded it first.
    const already = res.statusCode !== 200 && api.alreadyLoaded(res.statusCode, text, adapter);
    if (res.statusCode !== 200 && !already) {
      return {
        ok: false,
        detail: `${api.loadPath} ${adapter}: HTTP ${res.statusCode} ${text.slice(0, 200)}`,
      };
    }
    ep.servedAdapters = new Set([...(ep.servedAdapters ?? []), adapter]);
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: `${api.loadPath} ${adapter}: ${(err as Error).message}` };
  }
}
