// Reads a V8 CPU profile (`node --cpu-prof`) into where a process's CPU went: busy time by area (the
// gateway's own folders under dist/, Node's HTTP, undici, streams, the garbage collector) and the
// functions with the most self time. Each sample counts once per area on its stack, so an area's figure
// is inclusive (what ran inside it, callees included) and areas overlap; "own code" counts samples whose
// innermost frame is the process's own JavaScript. Module loading at startup is left out, so a figure
// divided by the requests served is the request path's price. The event loop's glue (process ticks,
// event emitters) wraps nearly every sample and is left without an area.

/** What `--cpu-prof` writes (the fields read here). */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface CpuBreakdown {
  /** Sampled time not idle and not loading modules, µs. */
  busyUs: number;
  /** Inclusive µs per area, largest first. */
  areas: { area: string; us: number }[];
  /** Self µs per function (name, area, line), largest first. */
  selfTop: { fn: string; us: number }[];
}

/** The area a frame belongs to: `own/<folder>` for the process's compiled code, else the library or Node part. */
export function areaOf(url: string, functionName: string): string {
  const own = /\/dist\/([^/]+)\//.exec(url);
  if (own && !url.includes("/node_modules/")) return `own/${own[1]}`;
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  // The event loop's glue (ticks, microtasks, emitters) sits under nearly everything: no area of its own.
  if (url === "node:events" || url === "node:internal/process/task_queues") return "other";
  if (url.startsWith("node:")) {
    if (/^node:(_http|http)/.test(url)) return "node:http";
    if (/^node:(net|internal\/stream_base_commons)/.test(url)) return "node:net";
    if (url.startsWith("node:internal/streams")) return "node:streams";
    if (url.startsWith("node:internal/timers") || url === "node:timers") return "node:timers";
    return "node:other";
  }
  if (url.startsWith("wasm://")) return "wasm (undici's HTTP parser)";
  if (functionName === "(garbage collector)") return "gc";
  if (functionName === "(program)") return "v8 (program)";
  if (functionName === "writev" || functionName === "writeUtf8String" || functionName === "writeBuffer")
    return "socket writes";
  return "other";
}

const SKIP = new Set(["(idle)", "(root)"]);

/** Where `profile`'s busy time went; see the file header. */
export function cpuBreakdown(profile: CpuProfile, topFunctions = 25): CpuBreakdown {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areas = new Map<string, number>();
  const self = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    const leaf = byId.get(id)?.callFrame;
    if (!leaf || SKIP.has(leaf.functionName)) return;
    const stack: CpuProfile["nodes"][number]["callFrame"][] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) stack.push(frame);
    }
    if (stack.some((f) => f.url.startsWith("node:internal/modules/"))) return;
    busyUs += dt;
    const seen = new Set<string>();
    for (const f of stack) {
      const a = areaOf(f.url, f.functionName);
      if (seen.has(a) || a === "other") continue;
      seen.add(a);
      areas.set(a, (areas.get(a) ?? 0) + dt);
    }
    if (areaOf(leaf.url, leaf.functionName).startsWith("own/"))
      areas.set("own code", (areas.get("own code") ?? 0) + dt);
    const where = leaf.url
      ? ` ${leaf.url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${leaf.lineNumber + 1}`
      : "";
    const key = `${leaf.functionName || "(anonymous)"}${where}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    busyUs,
    areas: sorted(areas).map(([area, us]) => ({ area, us })),
    selfTop: sorted(self)
      .slice(0, topFunctions)
      .map(([fn, us]) => ({ fn, us })),
  };
}
