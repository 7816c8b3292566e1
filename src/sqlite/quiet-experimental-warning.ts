// Node 22 prints "ExperimentalWarning: SQLite is an experimental feature" once, when `node:sqlite` is first
// loaded (Node 24 no longer does). tokengate's use of it is settled and tested on both, so that one
// warning is dropped; every other warning still reaches the listeners that were there before (Node's own
// printer unless --no-warnings). Called just before the module is loaded: the warning is emitted on the
// next tick.

let installed = false;

export function dropSqliteExperimentalWarning(): void {
  if (installed || Number(process.versions.node.split(".")[0]) >= 24) return;
  installed = true;
  const before = process.listeners("warning");
  process.removeAllListeners("warning");
  process.on("warning", (w: Error) => {
    if (w.name === "ExperimentalWarning" && /\bSQLite\b/.test(w.message)) return;
    for (const listener of before) listener(w);
  });
}
