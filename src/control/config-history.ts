// The config history: every version the gateway has run, with the files that made it, and each act that
// changed what runs (an apply from a file or the admin API, a reload, a rollback), in an embedded SQLite
// file. What runs is the last act; an act and the version it names are written in one transaction, so a
// crash leaves either the old state or the new one, never a history that disagrees with itself.

import { createHash } from "node:crypto";
import { SqliteFile } from "../sqlite/sqlite-file.js";

/** What a version is made of: its YAML files by name. */
export type ConfigFiles = Readonly<Record<string, string>>;

export type ConfigAction = "start" | "apply" | "reload" | "rollback" | "promote";

/** One act that changed the config in force. */
export interface ConfigAct {
  readonly seq: number;
  readonly version: string;
  readonly action: ConfigAction;
  /** Who: the admin token's name, `file`, `sighup`, `watch`. */
  readonly actor: string;
  /** The version that ran before; null for the first. */
  readonly replaced: string | null;
  /** ISO time. */
  readonly at: string;
  readonly note: string | null;
  /** Applied with --force past a check that refused it (the rollout's gates). */
  readonly forced: boolean;
}

export interface StoredVersion {
  readonly version: string;
  readonly files: ConfigFiles;
  /** SHA-256 over the files, names and contents. */
  readonly digest: string;
  readonly createdAt: string;
}

/** Why recording a version failed; the gateway turns it into an admin error. */
export class HistoryConflict extends Error {
  constructor(
    readonly code: "version_exists",
    message: string,
  ) {
    super(message);
  }
}

/** Why a version name cannot be given to other content. */
export function versionExistsMessage(version: string): string {
  return (
    `version ${version} is already in the history with other content; give the new config a new ` +
    "ai.example.com/route-config-version"
  );
}

/** The digest that names a version's content: file names and texts, in name order. */
export function digestOf(files: ConfigFiles): string {
  const h = createHash("sha256");
  for (const name of Object.keys(files).sort()) {
    h.update(name).update("\0").update(files[name]!).update("\0");
  }
  return h.digest("hex");
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS versions (
  version TEXT PRIMARY KEY,
  digest TEXT NOT NULL,
  files TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS acts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  version TEXT NOT NULL REFERENCES versions(version),
  action TEXT NOT NULL,
  actor TEXT NOT NULL,
  replaced TEXT,
  at TEXT NOT NULL,
  note TEXT,
  forced INTEGER NOT NULL DEFAULT 0
);
`;

interface ActRow {
  seq: number;
  version: string;
  action: string;
  actor: string;
  replaced: string | null;
  at: string;
  note: string | null;
  forced: number;
}

interface VersionRow {
  version: string;
  digest: string;
  files: string;
  created_at: string;
}

export class ConfigHistory {
  private readonly db: SqliteFile;

  /** Opens (creating) the history at `path`; `:memory:` keeps it in this process only. */
  constructor(readonly path: string) {
    this.db = SqliteFile.open(path, { synchronous: "FULL" });
    this.db.exec(SCHEMA);
  }

  /** The act in force: the last one written; null before the first. */
  current(): ConfigAct | null {
    const row = this.db.prepare<[], ActRow>("SELECT * FROM acts ORDER BY seq DESC LIMIT 1").get();
    return row ? actOf(row) : null;
  }

  /** The last `limit` acts, newest first. */
  acts(limit = 50): ConfigAct[] {
    const rows = this.db.prepare<[number], ActRow>("SELECT * FROM acts ORDER BY seq DESC LIMIT ?").all(limit);
    return rows.map(actOf);
  }

  version(version: string): StoredVersion | null {
    const row = this.db
      .prepare<[string], VersionRow>("SELECT * FROM versions WHERE version = ?")
      .get(version);
    return row
      ? {
          version: row.version,
          digest: row.digest,
          files: JSON.parse(row.files) as ConfigFiles,
          createdAt: row.created_at,
        }
      : null;
  }

  /**
   * Writes a version (when new) and the act that puts it in force, in one transaction. A version name
   * already stored with other content is refused: a version names one config, so "back to r2" means
   * one thing.
   */
  record(
    version: string,
    files: ConfigFiles,
    act: { action: ConfigAction; actor: string; note?: string | null; forced?: boolean },
    now = new Date(),
  ): ConfigAct {
    const digest = digestOf(files);
    const at = now.toISOString();
    return this.db.transaction((): ConfigAct => {
      const existing = this.db.prepare("SELECT digest FROM versions WHERE version = ?").get(version) as
        | { digest: string }
        | undefined;
      if (existing && existing.digest !== digest) {
        throw new HistoryConflict("version_exists", versionExistsMessage(version));
      }
      if (!existing) {
        this.db
          .prepare("INSERT INTO versions (version, digest, files, created_at) VALUES (?, ?, ?, ?)")
          .run(version, digest, JSON.stringify(files), at);
      }
      const before = this.current();
      const info = this.db
        .prepare(
          "INSERT INTO acts (version, action, actor, replaced, at, note, forced) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          version,
          act.action,
          act.actor,
          before?.version ?? null,
          at,
          act.note ?? null,
          act.forced ? 1 : 0,
        );
      return {
        seq: Number(info.lastInsertRowid),
        version,
        action: act.action,
        actor: act.actor,
        replaced: before?.version ?? null,
        at,
        note: act.note ?? null,
        forced: act.forced === true,
      };
    });
  }

  close(): void {
    this.db.close();
  }
}

function actOf(r: ActRow): ConfigAct {
  return {
    seq: r.seq,
    version: r.version,
    action: r.action as ConfigAction,
    actor: r.actor,
    replaced: r.replaced,
    at: r.at,
    note: r.note,
    forced: r.forced === 1,
  };
}
