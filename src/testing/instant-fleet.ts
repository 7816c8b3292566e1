// A fleet of simulated engines that answer at once (profile `instant`), for harness tests that need
// real engines but no simulated timing: two vLLM-dialect replicas serving `model` by default.

import type { FleetSpec } from "../sim/fleet.js";

export function instantFleet(name: string, replicas = 2, model = "model"): FleetSpec {
  return {
    name,
    host: "127.0.0.1",
    seed: 1,
    groups: [
      {
        name: "engines",
        replicas,
        port: 0,
        profile: "instant",
        model,
        dialect: "vllm",
        engine: {},
        outputLenDist: "max",
        streamInterval: 1,
        faults: {},
      },
    ],
  };
}
