// Pins the gRPC health services of the endpoint picker: liveness always serving, readiness, "" and the
// ext_proc service following ready(), unknown services refused, and Watch seeing readiness flip.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { StubPicker } from "../testing/envoy-ext-proc-client.js";
import { ServingStatus } from "./health.js";
import { EXT_PROC_SERVICE, HEALTH_SERVICE, serviceDefinition } from "./protos.js";
import { type EppServer, startEppServer } from "./server.js";

const HealthClient = grpc.makeGenericClientConstructor(serviceDefinition(HEALTH_SERVICE), "Health");

interface Health {
  Check(
    req: { service: string },
    cb: (err: grpc.ServiceError | null, res?: { status: number }) => void,
  ): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<{ status: number }>;
}

describe("epp health", () => {
  let ready = false;
  let epp: EppServer;
  let client: Health & grpc.Client;
  before(async () => {
    const picker = new StubPicker(() => ({ kind: "route", endpoint: "10.0.0.1:8000", fallbacks: [] }));
    epp = await startEppServer({
      host: "127.0.0.1",
      port: 0,
      picker,
      ready: () => ready,
      healthWatchIntervalMs: 5,
    });
    client = new HealthClient(
      `127.0.0.1:${epp.port}`,
      grpc.credentials.createInsecure(),
    ) as unknown as Health & grpc.Client;
  });
  after(async () => {
    client.close();
    await epp.close();
  });

  const check = (service: string) =>
    new Promise<number>((resolve, reject) =>
      client.Check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))),
    );

  it('answers liveness SERVING, and readiness, "" and the ext_proc service from ready()', async () => {
    ready = false;
    assert.equal(await check("liveness"), ServingStatus.SERVING);
    for (const s of ["", "readiness", EXT_PROC_SERVICE])
      assert.equal(await check(s), ServingStatus.NOT_SERVING, s);
    ready = true;
    assert.equal(await check("liveness"), ServingStatus.SERVING);
    for (const s of ["", "readiness", EXT_PROC_SERVICE])
      assert.equal(await check(s), ServingStatus.SERVING, s);
  });

  it("refuses an unknown service with NOT_FOUND", async () => {
    await assert.rejects(check("nope"), (err: grpc.ServiceError) => err.code === grpc.status.NOT_FOUND);
  });

  it("streams a Watch's status, then the change when readiness flips", async () => {
    ready = true;
    const watch = client.Watch({ service: "readiness" });
    const seen: number[] = [];
    const flipped = new Promise<void>((resolve) => {
      watch.on("data", (m: { status: number }) => {
        seen.push(m.status);
        if (seen.length === 1) ready = false;
        if (seen.length === 2) resolve();
      });
    });
    watch.on("error", () => {});
    await flipped;
    watch.cancel();
    assert.deepEqual(seen, [ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
  });

  it("watches an unknown service as SERVICE_UNKNOWN", async () => {
    const watch = client.Watch({ service: "nope" });
    watch.on("error", () => {});
    const first = await new Promise<number>((resolve) =>
      watch.once("data", (m: { status: number }) => resolve(m.status)),
    );
    watch.cancel();
    assert.equal(first, ServingStatus.SERVICE_UNKNOWN);
  });
});
