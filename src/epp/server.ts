// `tokengate epp`'s gRPC server: Envoy's ExternalProcessor (the endpoint picker protocol) and gRPC
// health on one port, for Envoy Gateway, kgateway or Istio to call tokengate's picker.

import * as grpc from "@grpc/grpc-js";
import type { EppPicker } from "./decision.js";
import { type ProcessCall, serveExchange } from "./exchange.js";
import { healthService } from "./health.js";
import { EXT_PROC_SERVICE, HEALTH_SERVICE, serviceDefinition } from "./protos.js";

/** Default cap on a buffered request body: 16 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Where to listen and whom to ask. */
export interface EppServerOptions {
  /** Interface to bind, e.g. "0.0.0.0", "::" or "127.0.0.1". */
  host: string;
  /** Port to bind; 0 picks a free one (read it back from the result). */
  port: number;
  picker: EppPicker;
  /** Readiness (datastore synced, leader, …): drives "", "readiness" and the ext_proc service's health. */
  ready(): boolean;
  /** Largest request body buffered for the picker; larger ones get 413. Default 16 MiB. */
  maxBodyBytes?: number;
  /** How often a health Watch re-reads ready(). Default 1000 ms. */
  healthWatchIntervalMs?: number;
  /** How long close() lets open streams finish before cancelling them. Default 10 s. */
  closeGraceMs?: number;
}

/** A listening endpoint picker server. */
export interface EppServer {
  /** The bound port (the free one chosen when asked for 0). */
  port: number;
  /** Stops taking streams, lets open ones finish for closeGraceMs, then cancels the rest. */
  close(): Promise<void>;
}

/** gRPC's own overhead around one body chunk in a message, on top of the chunk itself. */
const MESSAGE_OVERHEAD_BYTES = 64 * 1024;

/**
 * Starts the endpoint picker: `envoy.service.ext_proc.v3.ExternalProcessor/Process` and
 * `grpc.health.v1.Health`, plaintext (Envoy's ext_proc cluster is in-mesh).
 *
 * @example
 * const epp = await startEppServer({ host: "0.0.0.0", port: 9002, picker, ready: () => synced });
 * process.on("SIGTERM", () => void epp.close());
 */
export async function startEppServer(options: EppServerOptions): Promise<EppServer> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new Error(`epp: maxBodyBytes must be a non-negative integer, got ${maxBodyBytes}`);
  }
  // One Envoy body chunk can be as large as its buffer limit; let any chunk under the cap through so an
  // oversized body is answered 413 by the picker protocol, not RESOURCE_EXHAUSTED by gRPC.
  const maxMessage = Math.max(4 * 1024 * 1024, Math.min(maxBodyBytes + MESSAGE_OVERHEAD_BYTES, 2 ** 31 - 1));
  const server = new grpc.Server({ "grpc.max_receive_message_length": maxMessage });
  const health = healthService({
    ready: options.ready,
    watchIntervalMs: options.healthWatchIntervalMs ?? 1000,
  });
  server.addService(serviceDefinition(EXT_PROC_SERVICE), {
    Process: (call: ProcessCall) => serveExchange(call, { picker: options.picker, maxBodyBytes }),
  });
  server.addService(serviceDefinition(HEALTH_SERVICE), health.handlers);

  const host =
    options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      health.stop();
      const force = setTimeout(() => server.forceShutdown(), options.closeGraceMs ?? 10_000);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
    return closing;
  };
  return { port, close };
}
