// Endpoints and pick requests for the picker's tests (the static endpoint the micro-benchmarks use),
// and a deterministic `random`.

export {
  type StaticEndpoint as FakeEndpoint,
  staticEndpoint as fakeEndpoint,
  staticPickRequest as pickRequest,
} from "../picker/framework/static-endpoint.js";

/** A deterministic `random` for tests (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
