// A peer's algorithm as a benchmark router: tokengate's own config for the topology, with every pool's
// endpoint picker set to the peer's algorithm (picker/peers/) and the gateway queue off, as it is by
// default in each peer. The pools, routes, health checks, scrapes, HTTP stack and process are the same as
// tokengate's run: only the choice of endpoint differs.

import { parseAllDocuments, stringify } from "yaml";
import { PEER_ALGORITHMS, type PeerName } from "../../picker/peers/peer-algorithm.js";

export function isPeerRouter(router: string): router is PeerName {
  return (PEER_ALGORITHMS as readonly string[]).includes(router);
}

type Doc = { kind?: unknown; metadata?: unknown; spec?: Record<string, unknown> };

/** `files` (tokengate's config texts by file name) with `peer` picking for every pool and no gateway queue. */
export function peerGatewayConfig(files: Record<string, string>, peer: PeerName): Record<string, string> {
  const out: Record<string, string> = {};
  // Pools no EndpointPicker names take the pool-less one; without one, tokengate's defaults: add it.
  let poolless = 0;
  for (const [name, text] of Object.entries(files)) {
    const docs = parseAllDocuments(text).map((d) => d.toJS() as Doc | null);
    const kept: Doc[] = [];
    for (const doc of docs) {
      if (!doc) continue;
      if (doc.kind === "InferencePool") {
        const spec = doc.spec ?? {};
        const flow = (spec.flowControl as Record<string, unknown> | undefined) ?? {};
        kept.push({ ...doc, spec: { ...spec, flowControl: { ...flow, enabled: false } } });
      } else if (doc.kind === "EndpointPicker") {
        const pools = doc.spec?.pools;
        if (pools === undefined) poolless++;
        kept.push({ ...doc, spec: { ...(pools === undefined ? {} : { pools }), algorithm: peer } });
      } else {
        kept.push(doc);
      }
    }
    out[name] = kept.map((d) => stringify(d, { lineWidth: 0 })).join("---\n");
  }
  if (poolless === 0) {
    out["peer-picker.yaml"] = stringify({
      apiVersion: "tokengate.dev/v1alpha1",
      kind: "EndpointPicker",
      metadata: { name: `${peer}-picker` },
      spec: { algorithm: peer },
    });
  }
  return out;
}
