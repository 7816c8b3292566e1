// How report tables name a router's run: with its topology when it has one.

import type { RouterResult } from "../results.js";

export type Ran = [name: string, result: RouterResult][];

export function routerTitle(name: string, r: RouterResult): string {
  return r.topology ? `${name} (${r.topology})` : name;
}
