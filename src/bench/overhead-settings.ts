// Settings the overhead benchmark and its report share.

import { fileURLToPath } from "node:url";

/** `bare-node`: the least a proxy on tokengate's stack does (bare-proxy.ts), the stack's own price. */
export type PathName = "direct" | "tokengate" | "bare-node" | "nginx";

export const RATE = 1000;

/** A measurement during which other work used more than this many cores is repeated (at most twice). */
export const MAX_OTHER_CORES = 0.25;

export const CONCURRENCY = 64;

export const RELAY_TOKENS = 2000;

export const PATHS: PathName[] = ["direct", "tokengate", "bare-node", "nginx"];

/** The bare Node proxy's script, run as a child process. */
export const BARE_PROXY = fileURLToPath(new URL("./bare-proxy.js", import.meta.url));
