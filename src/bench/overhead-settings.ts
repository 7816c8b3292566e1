// Settings the overhead benchmark and its report share.

export type PathName = "direct" | "tokengate" | "nginx";

export const RATE = 1000;

/** A measurement during which other work used more than this many cores is repeated (at most twice). */
export const MAX_OTHER_CORES = 0.25;

export const CONCURRENCY = 64;

export const RELAY_TOKENS = 2000;

export const PATHS: PathName[] = ["direct", "tokengate", "nginx"];
