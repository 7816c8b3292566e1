// What the engine will now hold: each attempt records the request's prefix blocks against the endpoint
// it went to, so the next request of that prefix finds them. The one writer of the pool's prefix index.

import type { HookFactory } from "./hook-factory.js";

export const prefixIndex: HookFactory = () => ({
  name: "prefix-index",
  attempt(a) {
    a.pool.picker.index.record(a.endpoint.name, a.plan.pickRequest.blockHashes);
    return undefined;
  },
});
