// Every engine dialect a pool's `engine` may name: one line each.

import type { EngineDialect } from "./engine-dialect.js";
import { sglang } from "./sglang.js";
import { vllm } from "./vllm.js";

export const DIALECTS = { vllm, sglang } as const satisfies Record<string, EngineDialect>;

export type EngineDialectName = keyof typeof DIALECTS;
export const ENGINE_DIALECT_NAMES = Object.keys(DIALECTS) as EngineDialectName[];
