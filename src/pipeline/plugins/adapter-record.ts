// Which adapters an engine likely holds, and how many requests run on each: an attempt with an adapter
// records it as sent and running on its endpoint, and as no longer running when it ends — before its
// lease goes, since releasing the lease may place a queued request at once.

import type { HookFactory } from "./hook-factory.js";

export const adapterRecord: HookFactory = () => ({
  name: "adapter-record",
  attempt(a) {
    const adapter = a.plan.decision.target.adapter;
    if (adapter === null) return undefined;
    const record = a.endpoint.adapterRecord;
    record.sent(adapter, a.endpoint.loras?.max ?? null);
    record.began(adapter);
    return () => record.ended(adapter);
  },
});
