// Opening and closing the gateway's HTTP listeners.

import type http from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on `host:port` (0: a free port); resolves with the port bound. */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // A deep accept queue: a burst of new client connections must not overflow into SYN retries.
    server.listen({ port, host, backlog: 4096 }, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops listening and closes every connection, idle or not. */
export function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
