// A plugin of the request pipeline: built once per gateway from its runtime, registered on hook points.

import type { RequestHook } from "../hooks.js";
import type { GatewayRuntime } from "../runtime.js";

export type HookFactory = (gw: GatewayRuntime) => RequestHook;
