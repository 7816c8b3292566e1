// Changing the config of a running gateway: apply a new version, roll back to one in the history, or
// reload from the config's files on disk (on SIGHUP, or when they change). Every change is validated
// whole first — one that fails changes nothing and reports every error with its file, line and YAML
// path — then written to the history, then swapped in (Gateway.reload). A change names the version it
// replaces: two operators applying at once cannot overwrite each other, the second is refused with the
// version now running.
//
// At start the history decides what runs: the files' version when the history has never seen it (it is
// new on disk), otherwise the history's current version (an API apply or rollback survives a restart,
// and a crash between "history written" and "config swapped" comes back on the version written).

import type { GatewayConfigSet } from "../config/config-set.js";
import type { ConfigError } from "../config/errors.js";
import { type LoadOptions, loadConfigTexts } from "../config/loader.js";
import { readConfigTexts } from "../config/yaml-source.js";
import {
  type ConfigAct,
  type ConfigAction,
  type ConfigFiles,
  type ConfigHistory,
  digestOf,
  HistoryConflict,
  versionExistsMessage,
} from "./config-history.js";

/** What the control changes: the running gateway (or, at start, nothing yet). */
export interface Reloadable {
  readonly config: GatewayConfigSet;
  reload(config: GatewayConfigSet): unknown;
}

/** Why a change was refused, with the HTTP status the admin API answers with. */
export interface ChangeRefused {
  readonly ok: false;
  readonly status: 400 | 404 | 409 | 422;
  readonly code:
    | "config_invalid"
    | "config_conflict"
    | "version_exists"
    | "version_not_found"
    | "reload_without_source"
    | "rollout_gates_failed"
    | "rollout_not_forward";
  readonly message: string;
  /** Every validation error (config_invalid). */
  readonly errors?: readonly ConfigError[];
  /** The version running now (config_conflict). */
  readonly current?: string;
  /** More for the caller (the rollout's gate report). */
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface ChangeApplied {
  readonly ok: true;
  readonly act: ConfigAct | null;
  readonly config: GatewayConfigSet;
  /** The same version and content as the one running: nothing was done. */
  readonly unchanged: boolean;
}

export type ChangeResult = ChangeApplied | ChangeRefused;

export interface ChangeRequest {
  readonly files: ConfigFiles;
  /** The version the caller believes is running; null: whatever runs (reloads from disk). */
  readonly replaces: string | null;
  readonly actor: string;
  readonly action: ConfigAction;
  readonly note?: string | null;
  readonly forced?: boolean;
  /**
   * A last check of the validated config against the one running, inside the change's turn (so nothing
   * changes between the check and the swap): refuse it, or let it through (`forced`: past a failed check).
   */
  readonly guard?: (
    next: GatewayConfigSet,
    running: GatewayConfigSet | null,
  ) => ChangeRefused | { forced: boolean };
}

/**
 * Set to `after-history` (tests): a running gateway kills itself with SIGKILL between writing the
 * history and swapping the config, the crash the history's transaction has to survive.
 */
const CRASH_ENV = "TOKENGATE_CRASH_POINT";

export class ConfigControl {
  private target: Reloadable | null = null;
  /** Changes run one at a time: validation and the swap of one finish before the next begins. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly history: ConfigHistory,
    /** The file or folder the gateway was started from; null: API only. */
    readonly source: string | null,
    private readonly loadOptions: LoadOptions = {},
    /** Audit events: `config.applied` (who, what, old and new version) and `config.refused`. */
    private readonly audit: (event: string, fields: Record<string, unknown>) => void = () => {},
  ) {}

  /** The gateway changes go to, once it runs. */
  attach(target: Reloadable): void {
    this.target = target;
  }

  /**
   * What the gateway starts with: the source's files validated, and the history's word on which version
   * runs (see the header). Refusals name every error; nothing is written then.
   */
  async initial(actor = "start"): Promise<ChangeResult> {
    if (this.source === null) throw new Error("initial() needs a source");
    const read = await readConfigTexts(this.source);
    if (read.errors.length > 0) return invalid(read.errors);
    const fromDisk = this.validate(read.files);
    if (!fromDisk.ok) return fromDisk;
    const current = this.history.current();
    const version = fromDisk.config.version;
    const stored = this.history.version(version);
    if (current && stored && current.version !== version) {
      // The files name a version the history has seen, and another has been put in force since.
      return this.fromHistory(current.version);
    }
    if (stored && stored.digest !== digestOf(read.files)) return versionExists(version);
    if (current?.version === version)
      return { ok: true, act: null, config: fromDisk.config, unchanged: true };
    return this.commit({ files: read.files, replaces: null, actor, action: "start" }, fromDisk.config);
  }

  /** Applies a new version (the admin API's POST /admin/config). */
  apply(req: ChangeRequest): Promise<ChangeResult> {
    return this.serial(() => this.applyNow(req));
  }

  /** Puts a version from the history back in force (its files validated again). */
  rollback(to: string, actor: string, replaces: string | null, note?: string | null): Promise<ChangeResult> {
    return this.serial(() => {
      const stored = this.history.version(to);
      if (!stored) return notFound(to);
      return this.applyNow({ files: stored.files, replaces, actor, action: "rollback", note: note ?? null });
    });
  }

  /** Reads the source again and applies it if it changed (SIGHUP, a change on disk, POST /admin/reload). */
  reloadFromSource(actor: string): Promise<ChangeResult> {
    return this.serial(async () => {
      if (this.source === null) {
        return refused(
          400,
          "reload_without_source",
          "the gateway was not started from a config file or folder",
        );
      }
      const read = await readConfigTexts(this.source);
      if (read.errors.length > 0) return invalid(read.errors);
      return this.applyNow({ files: read.files, replaces: null, actor, action: "reload" });
    });
  }

  private serial(fn: () => ChangeResult | Promise<ChangeResult>): Promise<ChangeResult> {
    const audited = async () => {
      const r = await fn();
      if (!r.ok) {
        this.audit("config.refused", {
          code: r.code,
          message: r.message,
          errors: r.errors?.length ?? 0,
          current: this.target?.config.version ?? null,
        });
      }
      return r;
    };
    const run = this.chain.then(audited, audited);
    this.chain = run.catch(() => {});
    return run;
  }

  private applyNow(req: ChangeRequest): ChangeResult | Promise<ChangeResult> {
    const checked = this.validate(req.files);
    if (!checked.ok) return checked;
    const running = this.target?.config.version ?? this.history.current()?.version ?? null;
    if (req.replaces !== null && req.replaces !== running) {
      return {
        ok: false,
        status: 409,
        code: "config_conflict",
        message:
          `this change replaces version ${req.replaces}, but ${running ?? "no version"} is running now ` +
          `(someone else changed it); look at it and apply again naming it`,
        current: running ?? undefined,
      };
    }
    const version = checked.config.version;
    const stored = this.history.version(version);
    if (stored && stored.digest !== digestOf(req.files)) return versionExists(version);
    if (req.guard) {
      const verdict = req.guard(checked.config, this.target?.config ?? null);
      if ("ok" in verdict) return verdict;
      if (verdict.forced) req = { ...req, forced: true };
    }
    if (version === running && stored) {
      return { ok: true, act: null, config: this.target?.config ?? checked.config, unchanged: true };
    }
    return this.commit(req, checked.config);
  }

  private async commit(req: ChangeRequest, config: GatewayConfigSet): Promise<ChangeResult> {
    let act: ConfigAct;
    try {
      act = this.history.record(config.version, req.files, req);
    } catch (err) {
      if (err instanceof HistoryConflict) return versionExists(config.version);
      throw err;
    }
    if (this.target && process.env[CRASH_ENV] === "after-history") process.kill(process.pid, "SIGKILL");
    // The history is written: whatever happens now, a restart comes back on this version.
    await this.target?.reload(config);
    this.audit("config.applied", {
      version: act.version,
      replaced: act.replaced,
      action: act.action,
      actor: act.actor,
      note: act.note,
      forced: act.forced,
    });
    return { ok: true, act, config, unchanged: false };
  }

  private fromHistory(version: string): ChangeResult {
    const stored = this.history.version(version)!;
    const checked = this.validate(stored.files);
    if (!checked.ok) return checked;
    return { ok: true, act: this.history.current(), config: checked.config, unchanged: true };
  }

  private validate(files: ConfigFiles): { ok: true; config: GatewayConfigSet } | ChangeRefused {
    if (Object.keys(files).length === 0)
      return refused(400, "config_invalid", "no files: a config needs at least one");
    const loaded = loadConfigTexts({ ...files }, this.loadOptions);
    return loaded.ok ? { ok: true, config: loaded.config } : invalid(loaded.errors);
  }
}

function refused(
  status: ChangeRefused["status"],
  code: ChangeRefused["code"],
  message: string,
): ChangeRefused {
  return { ok: false, status, code, message };
}

function invalid(errors: readonly ConfigError[]): ChangeRefused {
  const n = errors.length;
  return {
    ok: false,
    status: 422,
    code: "config_invalid",
    message: `the config has ${n} error${n === 1 ? "" : "s"}; nothing was changed`,
    errors,
  };
}

function versionExists(version: string): ChangeRefused {
  return refused(409, "version_exists", versionExistsMessage(version));
}

function notFound(version: string): ChangeRefused {
  return refused(404, "version_not_found", `version ${version} is not in the config history`);
}
