// The names the endpoint picker protocol agrees on with the proxy, and reading and writing them in ext_proc
// messages: header maps, the subset hint and served endpoint in metadata_context, the destination metadata.

import type { HeaderMap, Metadata, ProtoStruct, ProtoValue } from "./protos.js";

/** Request header carrying the primary endpoint; Envoy's ORIGINAL_DST cluster routes on it. */
export const DESTINATION_HEADER = "x-gateway-destination-endpoint";
/** Dynamic metadata namespace of the destination list, and of the served endpoint on the response path. */
export const LB_NAMESPACE = "envoy.lb";
/** Filter metadata namespace and key of the proxy's subset hint. */
export const SUBSET_NAMESPACE = "envoy.lb.subset_hint";
export const SUBSET_KEY = "x-gateway-destination-endpoint-subset";
/** Key, in namespace envoy.lb, of the endpoint that served the request. */
export const SERVED_KEY = "x-gateway-destination-endpoint-served";

/** A header map as a record: lower-cased names, raw_value preferred over value, repeats joined with ", ". */
export function headerRecord(map: HeaderMap | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of map?.headers ?? []) {
    const name = h.key.toLowerCase();
    const value =
      h.raw_value && h.raw_value.length > 0 ? Buffer.from(h.raw_value).toString("utf8") : (h.value ?? "");
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  }
  return out;
}

/** A record as a header map, values in raw_value as Envoy sends them. */
export function headerMap(headers: Readonly<Record<string, string>>): HeaderMap {
  return {
    headers: Object.entries(headers).map(([key, value]) => ({ key, raw_value: Buffer.from(value) })),
  };
}

function field(md: Metadata | null | undefined, namespace: string, key: string): ProtoValue | undefined {
  return md?.filter_metadata?.[namespace]?.fields?.[key];
}

/**
 * The subset hint: a list of `ip:port` strings (a single comma-separated string is accepted too); null
 * when the proxy sent none.
 */
export function readSubset(md: Metadata | null | undefined): string[] | null {
  const v = field(md, SUBSET_NAMESPACE, SUBSET_KEY);
  if (!v) return null;
  if (v.listValue) {
    return (v.listValue.values ?? []).flatMap((e) =>
      typeof e.stringValue === "string" ? [e.stringValue] : [],
    );
  }
  if (typeof v.stringValue === "string") return splitEndpoints(v.stringValue);
  return null;
}

/** The endpoint Envoy says served the request, or null when it did not say. */
export function readServed(md: Metadata | null | undefined): string | null {
  const v = field(md, LB_NAMESPACE, SERVED_KEY)?.stringValue;
  return typeof v === "string" && v !== "" ? (splitEndpoints(v)[0] ?? null) : null;
}

function splitEndpoints(s: string): string[] {
  return s
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
}

/** `{"envoy.lb": {"x-gateway-destination-endpoint": "ip:port[,ip:port…]"}}` as a Struct. */
export function destinationMetadata(endpoints: readonly string[]): ProtoStruct {
  return {
    fields: {
      [LB_NAMESPACE]: {
        structValue: { fields: { [DESTINATION_HEADER]: { stringValue: endpoints.join(",") } } },
      },
    },
  };
}
