// Typed reads of one YAML map with exact error paths: each read marks its key as known, and done() reports
// every key nobody read as an unknown field, so typos like `maxInputToken` fail validation.
import { didYouMean, type IssueList, type PathSegment } from "./errors.js";

type Plain = Record<string, unknown>;

/** An environment variable's name (`*Env` fields). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface StringRule {
  required?: boolean;
  /** Allowed values; anything else is an error naming them. */
  oneOf?: readonly string[];
  pattern?: RegExp;
  /** Says in words what `pattern` accepts. */
  patternHint?: string;
}

export interface IntRule {
  required?: boolean;
  min?: number;
  max?: number;
}

/** Reads fields of a map found at `path`; records problems in `issues` and returns `undefined` for them. */
export class FieldReader {
  private readonly used = new Set<string>();

  private constructor(
    readonly value: Plain,
    readonly path: readonly PathSegment[],
    readonly issues: IssueList,
  ) {}

  /** A reader for `value`, or null (after recording an error) when it is not a map. */
  static of(value: unknown, path: readonly PathSegment[], issues: IssueList): FieldReader | null {
    if (!isPlainMap(value)) {
      issues.error(path, `must be a map, got ${describe(value)}`);
      return null;
    }
    return new FieldReader(value, path, issues);
  }

  at(key: string | number, ...more: PathSegment[]): PathSegment[] {
    return [...this.path, key, ...more];
  }

  has(key: string): boolean {
    return Object.hasOwn(this.value, key) && this.value[key] !== null && this.value[key] !== undefined;
  }

  /** The key is written with a null value (`key: null`, "off" for settings that allow it); marks it known. */
  isNull(key: string): boolean {
    this.used.add(key);
    return Object.hasOwn(this.value, key) && this.value[key] === null;
  }

  /** The raw value, marking the key known; `undefined` when absent or null. */
  raw(key: string, required = false): unknown {
    this.used.add(key);
    if (!this.has(key)) {
      if (required) this.issues.error(this.path, `missing required field "${key}"`);
      return undefined;
    }
    return this.value[key];
  }

  string(key: string, rule: StringRule = {}): string | undefined {
    const v = this.raw(key, rule.required);
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "") {
      this.issues.error(this.at(key), `must be a non-empty string, got ${describe(v)}`);
      return undefined;
    }
    if (rule.oneOf && !rule.oneOf.includes(v)) {
      const list = rule.oneOf.map((o) => JSON.stringify(o)).join(", ");
      this.issues.error(
        this.at(key),
        `must be one of ${list}, got ${JSON.stringify(v)}${didYouMean(v, rule.oneOf)}`,
      );
      return undefined;
    }
    if (rule.pattern && !rule.pattern.test(v)) {
      this.issues.error(
        this.at(key),
        `${JSON.stringify(v)} is not valid: ${rule.patternHint ?? `must match ${rule.pattern}`}`,
      );
      return undefined;
    }
    return v;
  }

  int(key: string, rule: IntRule = {}): number | undefined {
    const v = this.raw(key, rule.required);
    if (v === undefined) return undefined;
    return checkInt(v, this.at(key), this.issues, rule);
  }

  /** A finite number in [min, max] (either bound optional); undefined when absent or wrong. */
  number(key: string, rule: { min?: number; max?: number } = {}): number | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v)) {
      this.issues.error(this.at(key), `must be a number, got ${describe(v)}`);
      return undefined;
    }
    const { min, max } = rule;
    if ((min !== undefined && v < min) || (max !== undefined && v > max)) {
      const range =
        max === undefined ? `>= ${min}` : min === undefined ? `<= ${max}` : `between ${min} and ${max}`;
      this.issues.error(this.at(key), `must be ${range}, got ${v}`);
      return undefined;
    }
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") {
      this.issues.error(this.at(key), `must be true or false, got ${describe(v)}`);
      return undefined;
    }
    return v;
  }

  /** A list of non-empty strings; a single string is accepted when `allowSingle` (e.g. `requestClass: batch`). */
  stringList(key: string, opts: { required?: boolean; allowSingle?: boolean } = {}): string[] | undefined {
    const v = this.raw(key, opts.required);
    if (v === undefined) return undefined;
    if (opts.allowSingle && typeof v === "string" && v !== "") return [v];
    if (!Array.isArray(v)) {
      this.issues.error(this.at(key), `must be a list of strings, got ${describe(v)}`);
      return undefined;
    }
    if (v.length === 0) {
      this.issues.error(this.at(key), "must not be empty");
      return undefined;
    }
    const out: string[] = [];
    const seen = new Set<string>();
    v.forEach((item, i) => {
      if (typeof item !== "string" || item === "") {
        this.issues.error(this.at(key, i), `must be a non-empty string, got ${describe(item)}`);
      } else if (seen.has(item)) {
        this.issues.error(this.at(key, i), `duplicate value ${JSON.stringify(item)}`);
      } else {
        seen.add(item);
        out.push(item);
      }
    });
    return out.length === v.length ? out : undefined;
  }

  /** A nested map's reader; null when absent (error if required) or not a map. */
  map(key: string, required = false): FieldReader | null {
    const v = this.raw(key, required);
    if (v === undefined) return null;
    return FieldReader.of(v, this.at(key), this.issues);
  }

  /** A nested list's items; undefined when absent (error if required) or not a list. */
  list(key: string, opts: { required?: boolean; nonEmpty?: boolean } = {}): unknown[] | undefined {
    const v = this.raw(key, opts.required);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) {
      this.issues.error(this.at(key), `must be a list, got ${describe(v)}`);
      return undefined;
    }
    if (opts.nonEmpty && v.length === 0) {
      this.issues.error(this.at(key), "must not be empty");
      return undefined;
    }
    return v;
  }

  /** Reports every key that no read asked for. */
  done(): void {
    const known = [...this.used];
    for (const key of Object.keys(this.value)) {
      if (!this.used.has(key)) {
        this.issues.error(this.at(key), `unknown field "${key}"${didYouMean(key, known)}`, "key");
      }
    }
  }
}

export function checkInt(
  v: unknown,
  path: PathSegment[],
  issues: IssueList,
  rule: IntRule,
): number | undefined {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    issues.error(path, `must be an integer, got ${describe(v)}`);
    return undefined;
  }
  if (rule.min !== undefined && v < rule.min) {
    issues.error(
      path,
      rule.min === 1 ? `must be a positive integer, got ${v}` : `must be >= ${rule.min}, got ${v}`,
    );
    return undefined;
  }
  if (rule.max !== undefined && v > rule.max) {
    issues.error(path, `must be <= ${rule.max}, got ${v}`);
    return undefined;
  }
  return v;
}

export function isPlainMap(v: unknown): v is Plain {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A value as a message quotes it: a scalar as written (`"host.local"`, `7`, `NaN`), a list or a map by
 * its kind — never JSON.stringify of a collection, which throws on one that contains itself through a
 * YAML alias (`&a [*a]`).
 */
export function quoted(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object" && v !== null) return "a map";
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** Names a value's type for messages: `a string ("8192")`, `a list`, `null`. */
export function describe(v: unknown): string {
  if (v === null || v === undefined) return "nothing";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "string") return v === "" ? "an empty string" : `a string (${JSON.stringify(v)})`;
  if (typeof v === "number") return `a number (${v})`;
  if (typeof v === "boolean") return `a boolean (${v})`;
  if (typeof v === "object") return "a map";
  return typeof v;
}

export interface EnvOptions {
  /** Where `*Env` fields are read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** An unset env variable is an error (default) or a warning (`config validate` on a machine without secrets). */
  readonly missingEnv?: "error" | "warning";
}
