// Command-line flags, checked before a command does anything: a bad one is refused with the flag's name
// and the value given (`tokengate gateway: --port: expected an integer 0..65535, got "abc"`), the
// command's usage text, and exit status 2.

import { accessSync, constants, statSync } from "node:fs";
import { dirname } from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";

/** Where a command writes; tests pass collectors. */
export interface CommandOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export const processOutput: CommandOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** A problem with the command line (not with a config or a run): exit status 2 and the usage text. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;

const NEGATIVE = /^-(\d+(\.\d*)?|\.\d+)$/;
const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?(\d+(\.\d*)?|\.\d+)$/;

/**
 * `parseArgs` in strict mode, with its refusals in our words: an unknown option, a value missing (also
 * when the next word is another option: `--log --port 8080`), a value given to a boolean flag, an
 * argument a command does not take.
 */
export function parseFlags<T extends ParseArgsConfig & { args: string[]; options: Options }>(config: T) {
  const { tokens } = parseArgs({
    args: config.args,
    options: config.options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  // `--port -1` is a negative number to refuse for its range, not a missing value: joined as `--port=-1`.
  const args = [...config.args];
  const joined = new Set<number>();
  for (const t of tokens) {
    if (t.kind === "positional") {
      if (!config.allowPositionals) throw new UsageError(`unexpected argument "${t.value}"`);
      continue;
    }
    if (t.kind !== "option") continue;
    const spec = Object.hasOwn(config.options, t.name) ? config.options[t.name] : undefined;
    if (!spec) throw new UsageError(`${t.rawName}: unknown option`);
    const flag = t.rawName.startsWith("--") ? t.rawName : `${t.rawName} (--${t.name})`;
    if (spec.type === "boolean") {
      if (t.inlineValue) throw new UsageError(`${flag}: takes no value, got "${t.value}"`);
    } else if (t.value === undefined) {
      throw new UsageError(`${flag}: expected a value`);
    } else if (!t.inlineValue && NEGATIVE.test(t.value) && t.rawName.startsWith("--")) {
      args[t.index] = `${t.rawName}=${t.value}`;
      joined.add(t.index + 1);
    } else if (!t.inlineValue && t.value.length > 1 && t.value.startsWith("-")) {
      throw new UsageError(
        `${flag}: expected a value, got the option "${t.value}" (write ${t.rawName}=${t.value} if it is the value)`,
      );
    }
  }
  try {
    return parseArgs({ ...config, args: args.filter((_, i) => !joined.has(i)) });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function range(min: number, max: number, above = false): string {
  if (max === Number.POSITIVE_INFINITY || max === Number.MAX_SAFE_INTEGER)
    return `${above ? ">" : ">="} ${min}`;
  return `${min}..${max}`;
}

/**
 * An integer flag within [min, max]; undefined when absent. Plain digits only: "", " 8", "8.0", "1e3"
 * and "0x10" (which `Number()` would take) are refused.
 */
export function intFlag(
  value: string | undefined,
  flag: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = INTEGER.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new UsageError(`--${flag}: expected an integer ${range(min, max)}, got "${value}"`);
  return n;
}

/** A TCP port, 0 (any free port) to 65535. */
export function portFlag(value: string | undefined, flag = "port"): number | undefined {
  return intFlag(value, flag, 0, 65535);
}

/** A decimal number flag within [min, max] (or above `min` when `above`); undefined when absent. */
export function numberFlag(
  value: string | undefined,
  flag: string,
  min: number,
  max = Number.POSITIVE_INFINITY,
  above = false,
): number | undefined {
  if (value === undefined) return undefined;
  const n = DECIMAL.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || (above ? n <= min : n < min) || n > max)
    throw new UsageError(`--${flag}: expected a number ${range(min, max, above)}, got "${value}"`);
  return n;
}

/** A non-empty string flag. */
export function textFlag(value: string | undefined, flag: string, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError(`--${flag}: expected ${what}, got "${value}"`);
  return value;
}

/**
 * Why a request-log destination cannot be used, or null: `stdout`, `stderr`, `none`, or a file that can
 * be appended to (or created in a folder that exists). Checked without creating anything.
 */
export function logDestinationProblem(dest: string): string | null {
  if (dest === "stdout" || dest === "stderr" || dest === "none") return null;
  if (dest.trim() === "") return `expected stdout, stderr, none or a file path, got "${dest}"`;
  try {
    const st = statSync(dest, { throwIfNoEntry: false });
    if (st?.isDirectory()) return `"${dest}" is a folder; expected a file path`;
    if (st) accessSync(dest, constants.W_OK);
    else {
      const dir = dirname(dest);
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return `no folder "${dir}" for "${dest}"`;
      accessSync(dir, constants.W_OK);
    }
  } catch (err) {
    return `cannot write to "${dest}": ${(err as Error).message}`;
  }
  return null;
}

/** Writes `tokengate <command>: <problem>`, then the usage text, and returns 2; rethrows anything else. */
export function usageFailure(
  command: string,
  err: unknown,
  usage: string,
  io: CommandOutput = processOutput,
): number {
  if (!(err instanceof UsageError)) throw err;
  io.err(`tokengate ${command}: ${err.message}\n\n${usage}`);
  return 2;
}
