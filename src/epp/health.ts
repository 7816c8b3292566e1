// The gRPC Health Checking Protocol for the endpoint picker: liveness while the process serves, and
// readiness (also answered for "" and for the ext_proc service, which Envoy's cluster health check asks
// about) from the caller's ready().

import * as grpc from "@grpc/grpc-js";
import { EXT_PROC_SERVICE } from "./protos.js";

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
export const ServingStatus = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

interface HealthCheckRequest {
  service?: string;
}

interface HealthCheckResponse {
  status: number;
}

/** The services health answers for; every one but liveness follows ready(). */
export const HEALTH_SERVICES = ["", "liveness", "readiness", EXT_PROC_SERVICE] as const;

/** How health is judged and how often Watch looks again. */
export interface HealthOptions {
  ready(): boolean;
  /** How often a Watch re-reads ready() to notice a change. */
  watchIntervalMs: number;
}

/** The Health service's handlers, plus stop() to end open Watch streams (with NOT_SERVING) at shutdown. */
export interface HealthService {
  handlers: grpc.UntypedServiceImplementation;
  stop(): void;
}

/** Check and Watch over ready(); unknown services are NOT_FOUND (Check) or SERVICE_UNKNOWN (Watch). */
export function healthService(options: HealthOptions): HealthService {
  const watches = new Set<(shuttingDown: boolean) => void>();
  const statusOf = (service: string): number | null => {
    if (!(HEALTH_SERVICES as readonly string[]).includes(service)) return null;
    if (service === "liveness") return ServingStatus.SERVING;
    let ready = false;
    try {
      ready = options.ready();
    } catch {
      // A readiness probe that throws is not ready.
    }
    return ready ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };

  const check: grpc.handleUnaryCall<HealthCheckRequest, HealthCheckResponse> = (call, callback) => {
    const service = call.request.service ?? "";
    const status = statusOf(service);
    if (status === null)
      callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${JSON.stringify(service)}` });
    else callback(null, { status });
  };

  const watch: grpc.handleServerStreamingCall<HealthCheckRequest, HealthCheckResponse> = (call) => {
    const service = call.request.service ?? "";
    let last = -1;
    const look = () => {
      const status = statusOf(service) ?? ServingStatus.SERVICE_UNKNOWN;
      if (status !== last) call.write({ status });
      last = status;
    };
    const timer = setInterval(look, options.watchIntervalMs);
    const end = (shuttingDown: boolean) => {
      clearInterval(timer);
      watches.delete(end);
      if (call.writableEnded || call.destroyed) return;
      // A server going away is not serving, whatever it was.
      if (shuttingDown && last !== ServingStatus.NOT_SERVING)
        call.write({ status: ServingStatus.NOT_SERVING });
      call.end();
    };
    watches.add(end);
    call.on("cancelled", () => end(false));
    call.on("close", () => end(false));
    look();
  };

  return {
    handlers: { Check: check, Watch: watch },
    stop: () => {
      for (const end of [...watches]) end(true);
    },
  };
}
