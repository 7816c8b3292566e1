import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { asBuffer, SqliteFile } from "./sqlite-file.js";

const dir = mkdtempSync(join(tmpdir(), "tokengate-sqlite-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const path = join(dir, `f${n++}.db`);
  const f = SqliteFile.open(path);
  f.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
  return { f, path };
};
const count = (f: SqliteFile) => f.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM t").get()!.n;

describe("SqliteFile", () => {
  it("commits what a transaction's function wrote when it returns, and returns its value", () => {
    const { f } = fresh();
    const insert = f.prepare<[string, number]>("INSERT INTO t (k, v) VALUES (?, ?)");
    const v = f.transaction(() => {
      insert.run("a", 1);
      return insert.run("b", 2).changes;
    });
    assert.equal(v, 1);
    assert.equal(count(f), 2);
    f.close();
  });

  it("rolls back everything the function wrote when it throws, and rethrows", () => {
    const { f } = fresh();
    const insert = f.prepare<[string, number]>("INSERT INTO t (k, v) VALUES (?, ?)");
    assert.throws(
      () =>
        f.transaction(() => {
          insert.run("a", 1);
          throw new Error("half-way");
        }),
      /half-way/,
    );
    assert.equal(count(f), 0);
    // A constraint failure mid-way is the same: nothing of it stays.
    assert.throws(() =>
      f.transaction(() => {
        insert.run("a", 1);
        insert.run("a", 2);
      }),
    );
    assert.equal(count(f), 0);
    f.close();
  });

  it("inside a transaction, a failing inner one undoes only its own writes", () => {
    const { f } = fresh();
    const insert = f.prepare<[string, number]>("INSERT INTO t (k, v) VALUES (?, ?)");
    f.transaction(() => {
      insert.run("outer", 1);
      assert.throws(() =>
        f.transaction(() => {
          insert.run("inner", 2);
          throw new Error("inner fails");
        }),
      );
      f.transaction(() => insert.run("inner-ok", 3));
    });
    const keys = f.prepare<[], { k: string }>("SELECT k FROM t ORDER BY k").all();
    assert.deepEqual(
      keys.map((r) => r.k),
      ["inner-ok", "outer"],
    );
    f.close();
  });

  it("refuses a function that returns a promise, writing nothing", () => {
    const { f } = fresh();
    const insert = f.prepare<[string, number]>("INSERT INTO t (k, v) VALUES (?, ?)");
    assert.throws(
      () =>
        f.transaction(() => {
          insert.run("a", 1);
          return Promise.resolve();
        }),
      /must not return a promise/,
    );
    assert.equal(count(f), 0);
    f.close();
  });

  it("a second connection's write waits for the first's transaction, then fails SQLITE_BUSY after its timeout", () => {
    const { f, path } = fresh();
    const other = SqliteFile.open(path, { busyTimeoutMs: 50 });
    f.exec("BEGIN IMMEDIATE");
    const t0 = performance.now();
    assert.throws(() => other.transaction(() => {}), /locked|busy/i);
    assert.ok(performance.now() - t0 >= 40, "it waited for the lock first");
    f.exec("COMMIT");
    other.transaction(() => other.prepare("INSERT INTO t (k, v) VALUES ('x', 1)").run());
    assert.equal(count(f), 1, "the other connection's commit is seen");
    other.close();
    f.close();
  });

  it("reads a BLOB as bytes, read-only files refuse writes, and close is idempotent", () => {
    const { f, path } = fresh();
    f.exec("CREATE TABLE b (data BLOB NOT NULL)");
    f.prepare<[Buffer]>("INSERT INTO b (data) VALUES (?)").run(Buffer.from("héllo"));
    const row = f.prepare<[], { data: Uint8Array }>("SELECT data FROM b").get()!;
    assert.ok(row.data instanceof Uint8Array);
    assert.equal(asBuffer(row.data).toString(), "héllo");
    const ro = SqliteFile.open(path, { readOnly: true });
    assert.equal(count(ro), 0);
    assert.throws(() => ro.prepare("INSERT INTO t (k, v) VALUES ('y', 1)").run(), /readonly/i);
    ro.close();
    f.close();
    f.close();
    assert.equal(f.isOpen, false);
  });
});
