// The Batch API's running parts beside the gateway: the job store (SQLite or Redis), the runner that
// feeds jobs' lines through the gateway's own listener, and the routes. Opened with the gateway when
// GatewayConfig `batches` names a store; started once the listener is up (the runner sends to it),
// stopped before it closes (lines in flight may finish within the shutdown drain, the rest go back to
// pending for the next start).

import { randomBytes } from "node:crypto";
import type http from "node:http";
import { BatchRunner } from "../batch/batch-runner.js";
import type { BatchStore } from "../batch/batch-store.js";
import { batchStoreFor } from "../batch/batch-store-for.js";
import { LoopbackSender } from "../batch/loopback-sender.js";
import type { BatchSettings } from "../config/batch-settings.js";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { Identity } from "../pipeline/identify.js";
import type { GatewayMetrics } from "../telemetry/gateway-metrics.js";
import type { RequestLog } from "../telemetry/request-log.js";
import type { BatchApi } from "./batch-routes.js";

export class BatchService {
  /** The secret the runner's requests carry (identify.ts BATCH_SECRET_HEADER). */
  readonly secret = randomBytes(24).toString("base64url");
  readonly store: BatchStore;
  private runner: BatchRunner | null = null;
  private sender: LoopbackSender | null = null;

  private constructor(
    store: BatchStore,
    private settings: BatchSettings,
    private readonly log: RequestLog,
    private readonly metrics: GatewayMetrics,
  ) {
    this.store = store;
    metrics.registry.onCollect(() => metrics.batchLinesInFlight.labels().set(this.inFlight));
  }

  /** Opens the store the config names; null when the Batch API is off. */
  static open(config: GatewayConfigSet, log: RequestLog, metrics: GatewayMetrics): BatchService | null {
    const store = batchStoreFor(config);
    return store === null ? null : new BatchService(store, config.gateway.batches, log, metrics);
  }

  /** The routes' view of the gateway. */
  api(config: () => GatewayConfigSet, identify: (req: http.IncomingMessage) => Identity): BatchApi {
    return { store: this.store, config, identify, created: () => this.runner?.poke() };
  }

  /** Starts the runner, sending to the gateway's listener at `origin`. */
  start(origin: string): void {
    this.sender = new LoopbackSender(origin, this.secret, this.settings.concurrency);
    this.runner = new BatchRunner(this.store, this.sender.send, this.settings, {
      line: (f) => {
        this.metrics.batchLines.labels(f.outcome).inc();
        this.log.event("batch.line", f);
      },
      finalized: (id) => void this.finalized(id),
      storeError: (where, err) =>
        this.log.event("batch.store-error", {
          where,
          error: err instanceof Error ? err.message : String(err),
        }),
    });
    this.runner.start();
  }

  private async finalized(id: string): Promise<void> {
    const b = await this.store.batchById(id).catch(() => null);
    const status = b?.status ?? "unknown";
    this.metrics.batchJobsEnded.labels(status).inc();
    this.log.event("batch.finalized", {
      batch_id: id,
      status,
      tenant: b?.tenant,
      total: b?.request_total,
      completed: b?.request_completed,
      failed: b?.request_failed,
    });
  }

  /** A reload's settings (the store and its path take effect at the next start). */
  reconfigure(settings: BatchSettings): void {
    this.settings = { ...settings, store: this.settings.store, path: this.settings.path };
    this.runner?.reconfigure(this.settings);
  }

  get inFlight(): number {
    return this.runner?.inFlight ?? 0;
  }

  /** Stops claiming; lines in flight may finish until `deadline`; the rest go back to pending. */
  async stop(deadline = Date.now()): Promise<void> {
    await this.runner?.stop(deadline);
    await this.sender?.close();
    await this.store.close();
  }
}
