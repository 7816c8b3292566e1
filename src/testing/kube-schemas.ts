// Validates rendered core Kubernetes objects against their OpenAPI schemas with kubernetes-models (a dev
// dependency): types, required fields and enums, as the API server's schema would check them.

import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import type { KubeObject } from "../deploy/render.js";

type Validator = (obj: KubeObject) => void;

// The rendered object is what the model's constructor takes; its static type is checked by validate().
const SCHEMAS: ReadonlyMap<string, Validator> = new Map<string, Validator>([
  ["apps/v1/Deployment", (o) => new Deployment(o as never).validate()],
  ["policy/v1/PodDisruptionBudget", (o) => new PodDisruptionBudget(o as never).validate()],
  ["rbac.authorization.k8s.io/v1/Role", (o) => new Role(o as never).validate()],
  ["rbac.authorization.k8s.io/v1/RoleBinding", (o) => new RoleBinding(o as never).validate()],
  ["v1/ConfigMap", (o) => new ConfigMap(o as never).validate()],
  ["v1/Service", (o) => new Service(o as never).validate()],
  ["v1/ServiceAccount", (o) => new ServiceAccount(o as never).validate()],
]);

/** Whether `obj` is a core kind this module has a schema for. */
export function hasCoreSchema(obj: KubeObject): boolean {
  return SCHEMAS.has(`${obj.apiVersion}/${obj.kind}`);
}

/**
 * The schema's complaint about `obj`, or null when it validates. Throws for a kind without a schema here:
 * a new kind in deploy/ gets its schema added, not skipped.
 */
export function coreSchemaProblem(obj: KubeObject): string | null {
  const validate = SCHEMAS.get(`${obj.apiVersion}/${obj.kind}`);
  if (!validate) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind} (add it to core-schemas.ts)`);
  try {
    validate(obj);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
