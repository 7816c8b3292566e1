// Pins the multipart reader: bodies built by hand and by Node's own FormData (what fetch-based clients
// such as `openai` send, checked against the client itself) give the same fields and file whatever the
// chunking, one byte at a time included; binary data with CR, LF and `--` in it survives; and every
// limit or malformation is a typed error, the file cap one that stops reading early.

import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import { seededRandom } from "../testing/fake-endpoint.js";
import { MultipartError, type MultipartForm, multipartBoundary, readMultipart } from "./multipart.js";

const B = "----tokengate-test-7f3a";
const CT = `multipart/form-data; boundary=${B}`;
const LIMITS = { maxFileBytes: 1024 * 1024 };

interface HandPart {
  readonly headers: string[];
  readonly data: string | Buffer;
}

/** A body as RFC 2046 lays it out, with an optional preamble and epilogue. */
function body(parts: HandPart[], opts: { preamble?: string; epilogue?: string; boundary?: string } = {}) {
  const b = opts.boundary ?? B;
  const out: Buffer[] = [];
  if (opts.preamble !== undefined) out.push(Buffer.from(`${opts.preamble}\r\n`));
  for (const p of parts) {
    out.push(Buffer.from(`--${b}\r\n${p.headers.map((h) => `${h}\r\n`).join("")}\r\n`));
    out.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    out.push(Buffer.from("\r\n"));
  }
  out.push(Buffer.from(`--${b}--`));
  if (opts.epilogue !== undefined) out.push(Buffer.from(`\r\n${opts.epilogue}`));
  return Buffer.concat(out);
}

const field = (name: string, value: string): HandPart => ({
  headers: [`Content-Disposition: form-data; name="${name}"`],
  data: value,
});
const filePart = (
  data: string | Buffer,
  name = "file",
  filename = "input.jsonl",
  type = "application/jsonl",
) => ({
  headers: [
    `Content-Disposition: form-data; name="${name}"; filename="${filename}"`,
    `Content-Type: ${type}`,
  ],
  data,
});

/** The body in chunks of the sizes `size` gives, in turn. */
async function* chunked(buf: Buffer, size: () => number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; ) {
    const n = Math.max(1, size());
    yield buf.subarray(i, i + n);
    i += n;
  }
}

const whole = (buf: Buffer) => chunked(buf, () => buf.length);

async function rejectsWith(p: Promise<unknown>, code: string, param: string | null, says?: RegExp) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof MultipartError, `a MultipartError, not ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.param, param);
    if (says) assert.match(e.message, says);
    return true;
  });
}

/** Binary content that looks like a boundary in every way but being one. */
function trickyBytes(): Buffer {
  const all = Buffer.alloc(256);
  for (let i = 0; i < 256; i++) all[i] = i;
  return Buffer.concat([
    Buffer.from(`\r\n--\r\n\r\n--${B.slice(0, -1)}\r\n--${B.slice(0, -1)}X--\r\n-${B}\n--${B}\r`),
    all,
    Buffer.from("\r\n\r\n--"),
  ]);
}

describe("reading a form", () => {
  it("gives the text fields and the file of a hand-built body, with preamble and epilogue", async () => {
    const jsonl = '{"custom_id":"a"}\n{"custom_id":"b"}\n';
    const buf = body([field("purpose", "batch"), filePart(jsonl)], {
      preamble: "This is a multipart message.",
      epilogue: "And this is its epilogue.\r\n",
    });
    const form = await readMultipart(whole(buf), CT, LIMITS);
    assert.deepEqual(form.fields, { purpose: "batch" });
    assert.equal(form.file?.fieldName, "file");
    assert.equal(form.file?.filename, "input.jsonl");
    assert.equal(form.file?.contentType, "application/jsonl");
    assert.equal(form.file?.data.toString(), jsonl);
  });

  it("reads what Node's FormData sends through fetch: Response(formData) headers and bytes", async () => {
    const jsonl = Buffer.from('{"custom_id":"r-1","method":"POST"}\r\n{"custom_id":"r-2"}\n');
    const fd = new FormData();
    fd.append("purpose", "batch");
    fd.append("file", new Blob([jsonl], { type: "application/octet-stream" }), "requests.jsonl");
    const res = new Response(fd);
    const ct = res.headers.get("content-type") ?? undefined;
    const buf = Buffer.from(await res.arrayBuffer());
    assert.match(ct ?? "", /^multipart\/form-data; boundary=/);
    const form = await readMultipart(
      chunked(buf, () => 7),
      ct,
      LIMITS,
    );
    assert.deepEqual(form.fields, { purpose: "batch" });
    assert.deepEqual(
      { ...form.file, data: form.file?.data.toString() },
      {
        fieldName: "file",
        filename: "requests.jsonl",
        contentType: "application/octet-stream",
        data: jsonl.toString(),
      },
    );
  });

  it("reads what the openai client's files.create uploads", async () => {
    const jsonl = Buffer.from('{"custom_id":"x","method":"POST","url":"/v1/chat/completions","body":{}}\n');
    let seen: MultipartForm | null = null;
    const client = new OpenAI({
      apiKey: "sk-test",
      baseURL: "http://gateway.invalid/v1",
      maxRetries: 0,
      fetch: async (url, init) => {
        // What fetch would put on the wire for this request.
        const req = new Request(url, { ...init, duplex: "half" } as RequestInit);
        const ct = req.headers.get("content-type") ?? undefined;
        const bytes = Buffer.from(await req.arrayBuffer());
        seen = await readMultipart(
          chunked(bytes, () => 3),
          ct,
          LIMITS,
        );
        const file = {
          id: "file-1",
          object: "file",
          bytes: jsonl.length,
          created_at: 0,
          filename: "in.jsonl",
        };
        return Response.json({ ...file, purpose: "batch", status: "processed" });
      },
    });
    await client.files.create({ file: await toFile(jsonl, "in.jsonl"), purpose: "batch" });
    const form = seen as MultipartForm | null;
    assert.ok(form, "the client's fetch was called");
    assert.equal(form.fields.purpose, "batch");
    assert.equal(form.file?.fieldName, "file");
    assert.equal(form.file?.filename, "in.jsonl");
    assert.deepEqual(form.file?.data, jsonl);
  });

  it("gives the same form one byte at a time and in random chunk sizes, binary data intact", async () => {
    const data = trickyBytes();
    const buf = body(
      [
        field("purpose", "batch"),
        filePart(data, "file", "bin.jsonl", "application/octet-stream"),
        field("x", ""),
      ],
      { preamble: `--${B.slice(0, -2)}\r\n--`, epilogue: `--${B}\r\n` },
    );
    const expect = await readMultipart(whole(buf), CT, LIMITS);
    assert.deepEqual(expect.file?.data, data, "the tricky bytes came through");
    assert.deepEqual(expect.fields, { purpose: "batch", x: "" });
    assert.deepEqual(
      await readMultipart(
        chunked(buf, () => 1),
        CT,
        LIMITS,
      ),
      expect,
      "one byte at a time",
    );
    for (let seed = 1; seed <= 30; seed++) {
      const random = seededRandom(seed);
      const max = seed % 2 === 0 ? 8 : 200;
      const got = await readMultipart(
        chunked(buf, () => 1 + Math.floor(random() * max)),
        CT,
        LIMITS,
      );
      assert.deepEqual(got, expect, `seed ${seed}`);
    }
  });

  it("takes a quoted boundary, transport padding, a part without Content-Type, an empty file", async () => {
    const buf = Buffer.concat([
      Buffer.from(`--${B}  \t\r\n`),
      Buffer.from('content-disposition: form-data; name="file"; filename=""\r\n\r\n'),
      Buffer.from(`\r\n--${B}\r\n`),
      Buffer.from('Content-Disposition: form-data; name="purpose"\r\n\r\nbatch'),
      Buffer.from(`\r\n--${B}--\r\n`),
    ]);
    const form = await readMultipart(
      whole(buf),
      `Multipart/Form-Data; charset=utf-8; boundary="${B}"`,
      LIMITS,
    );
    assert.deepEqual(form.fields, { purpose: "batch" });
    assert.equal(form.file?.filename, "");
    assert.equal(form.file?.contentType, "text/plain", "RFC 7578's default");
    assert.equal(form.file?.data.length, 0);
  });

  it("reads escaped and RFC 5987 filenames, UTF-8 field values, and keeps a repeated field's first value", async () => {
    const buf = body([
      field("purpose", "batch"),
      field("purpose", "fine-tune"),
      field("note", "naïve — 字"),
      {
        headers: [`Content-Disposition: form-data; name="file"; filename*=UTF-8''r%C3%A9sum%C3%A9.jsonl`],
        data: "{}",
      },
    ]);
    const form = await readMultipart(whole(buf), CT, LIMITS);
    assert.deepEqual(form.fields, { purpose: "batch", note: "naïve — 字" });
    assert.equal(form.file?.filename, "résumé.jsonl");
    const quoted = body([filePart("{}", "file", 'a \\"b\\" C:\\dir.jsonl')]);
    assert.equal((await readMultipart(whole(quoted), CT, LIMITS)).file?.filename, 'a "b" C:\\dir.jsonl');
  });

  it("a form with no file part gives file null", async () => {
    const form = await readMultipart(whole(body([field("purpose", "batch")])), CT, LIMITS);
    assert.deepEqual(form, { fields: { purpose: "batch" }, file: null });
  });
});

describe("the boundary", () => {
  it("comes from the Content-Type, quoted or not", () => {
    assert.equal(multipartBoundary(`multipart/form-data; boundary=${B}`), B);
    assert.equal(multipartBoundary(`multipart/form-data;boundary="a b'c"`), "a b'c");
    assert.equal(multipartBoundary(`multipart/form-data; charset="x;y"; BOUNDARY=zz`), "zz");
  });

  it("missing, empty, too long or of another type is invalid_multipart", async () => {
    const bad = [
      undefined,
      "",
      "application/json",
      "multipart/mixed; boundary=abc",
      "multipart/form-data",
      "multipart/form-data; charset=utf-8",
      "multipart/form-data; boundary=",
      'multipart/form-data; boundary=""',
      `multipart/form-data; boundary=${"x".repeat(71)}`,
      'multipart/form-data; boundary="ends with space "',
      "multipart/form-data; boundary=a\rb",
    ];
    for (const ct of bad) {
      assert.throws(
        () => multipartBoundary(ct),
        (e: unknown) => e instanceof MultipartError && e.code === "invalid_multipart" && e.param === null,
        String(ct),
      );
      await rejectsWith(
        readMultipart(whole(body([field("purpose", "batch")])), ct, LIMITS),
        "invalid_multipart",
        null,
      );
    }
    assert.equal(multipartBoundary(`multipart/form-data; boundary=${"x".repeat(70)}`), "x".repeat(70));
  });
});

describe("limits and malformed bodies", () => {
  it("a file over the cap stops reading early: a 100 MiB upload costs about the cap", async () => {
    const maxFileBytes = 1024 * 1024;
    let yielded = 0;
    let finished = false;
    async function* huge(): AsyncGenerator<Buffer> {
      const head = Buffer.from(
        `--${B}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n`,
      );
      yielded += head.length;
      yield head;
      const chunk = Buffer.alloc(64 * 1024, "x");
      for (let i = 0; i < 1600; i++) {
        yielded += chunk.length;
        yield chunk;
      }
      finished = true;
    }
    await rejectsWith(readMultipart(huge(), CT, { maxFileBytes }), "file_too_large", "file", /1048576 bytes/);
    assert.equal(finished, false, "the 100 MiB were not all pulled");
    assert.ok(yielded < maxFileBytes + 2 * 64 * 1024, `pulled ${yielded} bytes`);
  });

  it("a file exactly at the cap is read; one byte more is file_too_large", async () => {
    const data = Buffer.alloc(5000, 0x0a);
    const at = await readMultipart(
      chunked(body([filePart(data)]), () => 333),
      CT,
      { maxFileBytes: 5000 },
    );
    assert.equal(at.file?.data.length, 5000);
    await rejectsWith(
      readMultipart(
        chunked(body([filePart(data)]), () => 333),
        CT,
        { maxFileBytes: 4999 },
      ),
      "file_too_large",
      "file",
    );
  });

  it("leaves a stream source undestroyed when it stops, so the caller can still answer", async () => {
    const source = Readable.from(chunked(body([filePart(Buffer.alloc(100_000))]), () => 4096));
    await rejectsWith(readMultipart(source, CT, { maxFileBytes: 10_000 }), "file_too_large", "file");
    assert.equal(source.destroyed, false);
    source.destroy();
  });

  it("a second file part is invalid_multipart naming it", async () => {
    const buf = body([field("purpose", "batch"), filePart("{}"), filePart("{}", "extra", "b.jsonl")]);
    await rejectsWith(readMultipart(whole(buf), CT, LIMITS), "invalid_multipart", "extra", /second file/);
  });

  it("more parts than maxParts is too_many_parts; exactly maxParts is read", async () => {
    const parts = (n: number) => Array.from({ length: n }, (_, i) => field(`f${i}`, "v"));
    const ok = await readMultipart(whole(body(parts(16))), CT, LIMITS);
    assert.equal(Object.keys(ok.fields).length, 16, "the default is 16");
    await rejectsWith(readMultipart(whole(body(parts(17))), CT, LIMITS), "too_many_parts", null);
    await rejectsWith(
      readMultipart(whole(body(parts(4))), CT, { ...LIMITS, maxParts: 3 }),
      "too_many_parts",
      null,
    );
  });

  it("a text field over its cap is invalid_multipart naming it", async () => {
    const long = body([field("purpose", "x".repeat(64 * 1024 + 1))]);
    await rejectsWith(readMultipart(whole(long), CT, LIMITS), "invalid_multipart", "purpose", /larger than/);
    const at = body([field("purpose", "x".repeat(64 * 1024))]);
    assert.equal((await readMultipart(whole(at), CT, LIMITS)).fields.purpose?.length, 64 * 1024);
    await rejectsWith(
      readMultipart(whole(body([field("purpose", "batch")])), CT, { ...LIMITS, maxFieldBytes: 4 }),
      "invalid_multipart",
      "purpose",
    );
  });

  it("malformed bodies are invalid_multipart", async () => {
    const full = body([field("purpose", "batch"), filePart("{}")]);
    const cases: [string, Buffer, RegExp][] = [
      ["empty", Buffer.alloc(0), /ended before/],
      ["truncated in the file", full.subarray(0, full.length - B.length - 10), /ended before/],
      ["no closing boundary", full.subarray(0, full.length - 2), /ended before/],
      ["no boundary at all", Buffer.from("purpose=batch"), /ended before/],
      ["another boundary", body([field("purpose", "batch")], { boundary: "other" }), /ended before/],
      ["junk after a boundary", Buffer.from(`--${B}junk\r\n\r\n\r\n--${B}--`), /not followed by CRLF/],
      [
        "no Content-Disposition",
        body([{ headers: ["Content-Type: text/plain"], data: "x" }]),
        /Content-Disposition/,
      ],
      ["no headers", body([{ headers: [], data: "x" }]), /Content-Disposition/],
      ["no name", body([{ headers: ["Content-Disposition: form-data"], data: "x" }]), /with a name/],
      [
        "not form-data",
        body([{ headers: ['Content-Disposition: attachment; name="a"'], data: "x" }]),
        /form-data/,
      ],
      ["a bad header line", body([{ headers: ["no colon here"], data: "x" }]), /malformed header/],
      [
        "huge headers",
        body([{ headers: [`X-Pad: ${"p".repeat(20_000)}`], data: "x" }]),
        /headers are too large/,
      ],
      [
        "huge preamble",
        body([field("a", "b")], { preamble: "p".repeat(70_000) }),
        /before the first boundary/,
      ],
      ["huge epilogue", body([field("a", "b")], { epilogue: "e".repeat(70_000) }), /after the closing/],
    ];
    for (const [name, buf, says] of cases) {
      await assert.rejects(
        readMultipart(
          chunked(buf, () => 1000),
          CT,
          LIMITS,
        ),
        (e: unknown) => e instanceof MultipartError && e.code === "invalid_multipart" && says.test(e.message),
        name,
      );
    }
  });
});
