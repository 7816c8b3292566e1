// GET /v1/models and GET /v1/models/{id}: what a caller may send as `model` — the aliases and the LoRA
// adapters their pools serve — in the OpenAI shape (the official client's models.list and retrieve).
// The director answers the same two routes with its regions' aliases (`routeModelNames`).

import type http from "node:http";
import type { GatewayConfigSet } from "../config/config-set.js";
import { GatewayError } from "../errors/gateway-error.js";
import { sendJson } from "../http/admin-body.js";
import { servedModelNames } from "./route-request.js";

const PREFIX = "/v1/models/";

/** Answers GET /v1/models and /v1/models/{id} with the config's served names; false for any other request. */
export function routeModels(
  config: GatewayConfigSet,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
): boolean {
  // Every request passes here: the completions' POSTs leave before any closure is made.
  if (req.method !== "GET") return false;
  return routeModelNames(() => servedModelNames(config), req, res, path);
}

/** Answers GET /v1/models and /v1/models/{id} from `names` (read only for those routes); false otherwise. */
export function routeModelNames(
  names: () => readonly string[],
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
): boolean {
  if (req.method !== "GET") return false;
  if (path === "/v1/models") {
    sendJson(res, 200, modelList(names()));
    return true;
  }
  if (!path.startsWith(PREFIX)) return false;
  try {
    sendJson(res, 200, modelById(names(), safeDecode(path.slice(PREFIX.length))));
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    err.send(res, "none");
  }
  return true;
}

export interface ModelObject {
  readonly id: string;
  readonly object: "model";
  readonly created: number;
  readonly owned_by: string;
}

export function modelList(names: readonly string[]): { object: "list"; data: ModelObject[] } {
  return { object: "list", data: names.map(modelObject) };
}

/** One model by id (ids may contain '/', as `org/adapter` does); 404 `model_not_found` otherwise. */
export function modelById(names: readonly string[], id: string): ModelObject {
  if (!names.includes(id)) {
    throw new GatewayError(
      "model_not_found",
      `The model "${id}" does not exist; available models: ${names.join(", ")}.`,
      {
        param: "model",
        fallbackOptions: names,
      },
    );
  }
  return modelObject(id);
}

function modelObject(id: string): ModelObject {
  return { id, object: "model", created: 0, owned_by: "tokengate" };
}

/** A path segment decoded; a malformed escape is kept as it came (and then names no model). */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
