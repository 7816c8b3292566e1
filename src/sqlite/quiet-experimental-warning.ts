// Node 22 prints "ExperimentalWarning: SQLite is an experimental feature" once, on the first import of
// `node:sqlite` (Node 24 no longer does). tokengate's use of it is settled and tested on both, so that one
// warning is dropped; every other warning still reaches the listeners that were there before (Node's own
// printer unless --no-warnings). Imported before `node:sqlite`: the warning is emitted on the next tick,
// after the import graph has run.

const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  const before = process.listeners("warning");
  process.removeAllListeners("warning");
  process.on("warning", (w: Error) => {
    if (w.name === "ExperimentalWarning" && /\bSQLite\b/.test(w.message)) return;
    for (const listener of before) listener(w);
  });
}
