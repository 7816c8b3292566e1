// A node:test reporter for scripts/run-tests.mjs, beside the spec reporter: one JSON line as each test
// file's process starts and ends, as each test starts and ends, and for each skipped test or suite with
// its reason — written as they happen, so the run can stop a file that runs past its deadline, say which
// tests it was running, and end with what was skipped and why.
import { basename, resolve } from "node:path";

export default async function* testEvents(source) {
  for await (const e of source) {
    const d = e.data ?? {};
    // The file's own entry: at the top, named as the file (as the runner was given it), and (Node 24) with
    // no entryFile of its own.
    const isFile =
      d.nesting === 0 &&
      typeof d.file === "string" &&
      d.entryFile === undefined &&
      (resolve(d.name) === d.file || d.name === basename(d.file));
    const at = { file: d.file ?? null, name: d.name, line: d.line ?? null, nesting: d.nesting };
    if (e.type === "test:dequeue") yield line(isFile ? "file-start" : "start", at);
    else if (e.type === "test:complete") yield line(isFile ? "file-end" : "end", at);
    else if ((e.type === "test:pass" || e.type === "test:fail") && d.skip !== undefined && d.skip !== false)
      yield line("skip", { ...at, reason: d.skip === true ? null : String(d.skip) });
  }
}

function line(event, fields) {
  return `${JSON.stringify({ event, at: Date.now(), ...fields })}\n`;
}
