import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfigTexts } from "../../config/index.js";
import { replicaNames } from "../scenarios/fleet-group.js";
import { getScenario } from "../scenarios/index.js";
import { peerGatewayConfig } from "./peer-config.js";

describe("a peer as a benchmark router", () => {
  it("is tokengate's config for the topology with every pool picking by the peer and no gateway queue", () => {
    const topo = getScenario("support-incident").topologies.at(-1)!;
    const urls = Object.fromEntries(
      topo.fleet.groups.map((g, gi) => [
        g.name,
        replicaNames(g).map((_, i) => `http://127.0.0.1:${9000 + gi * 10 + i}`),
      ]),
    );
    const own = loadConfigTexts(topo.gatewayConfig(urls));
    assert.ok(own.ok, own.ok ? "" : JSON.stringify(own.errors));
    const peer = loadConfigTexts(peerGatewayConfig(topo.gatewayConfig(urls), "dynamo-kv"));
    assert.ok(peer.ok, peer.ok ? "" : JSON.stringify(peer.errors));
    assert.deepEqual([...peer.config.pools.keys()], [...own.config.pools.keys()], "the same pools");
    assert.deepEqual(
      [...peer.config.route.aliases.keys()],
      [...own.config.route.aliases.keys()],
      "the same routes",
    );
    for (const [name, pool] of peer.config.pools) {
      assert.equal(pool.flowControl.enabled, false, `${name}: no gateway queue`);
      assert.equal(peer.config.pickers.get(name)!.algorithm, "dynamo-kv");
      assert.equal(own.config.pickers.get(name)!.algorithm, "tokengate");
    }
  });
});
