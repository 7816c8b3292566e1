// results.json's layout: indented like JSON.stringify(v, null, 2), except that an object or array
// holding only plain values stays on one line, so each sample or time point is one line, not four.

function isLeaf(value: object): boolean {
  return Object.values(value).every((v) => v === null || typeof v !== "object");
}

/** JSON text of `value`; parses back to exactly what JSON.stringify(value) would. */
export function jsonText(value: unknown, indent = ""): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  const toJSON = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === "function") return jsonText(toJSON.call(value), indent);
  if (isLeaf(value)) return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value.map(
      (v) => `${inner}${v === undefined || typeof v === "function" ? "null" : jsonText(v, inner)}`,
    );
    return `[\n${items.join(",\n")}\n${indent}]`;
  }
  const fields = Object.entries(value)
    .filter(([, v]) => v !== undefined && typeof v !== "function")
    .map(([k, v]) => `${inner}${JSON.stringify(k)}: ${jsonText(v, inner)}`);
  return fields.length === 0 ? "{}" : `{\n${fields.join(",\n")}\n${indent}}`;
}
