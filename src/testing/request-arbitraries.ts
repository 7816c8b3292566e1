// fast-check arbitraries for fuzzing the request path: OpenAI-shaped bodies whose every field may be of
// the wrong type, adversarial values (huge and fractional numbers, number-like strings, lone surrogates,
// deep arrays, prototype keys as own properties), random extra fields, and the X-AI-* headers.
// Objects are built with Object.fromEntries, so `__proto__` and `constructor` are own keys exactly as
// JSON.parse makes them; JSON.stringify(value) is then the bytes a client sends.

import fc from "fast-check";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Keys that have meaning on Object.prototype; as own JSON keys they must stay plain data. */
export const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];

const WEIRD_STRINGS = [
  "",
  " ",
  "NaN",
  "Infinity",
  "-Infinity",
  "-1",
  "0",
  "1e309",
  "0x10",
  "10",
  "null",
  "true",
  "undefined",
  "\u0000",
  "\uFFFD",
  "\uD800",
  "\uDC00x",
  "\u202E",
  "🎉",
  "世界",
  "a\nb",
  "summary-default",
  "live_ticket_summary",
  "batch",
  "a".repeat(65),
  ...PROTO_KEYS,
];

const WEIRD_NUMBERS = [
  0,
  -0,
  -1,
  1.5,
  0.1,
  2 ** 31,
  2 ** 32 + 1,
  2 ** 53,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  1e300,
  1e-300,
];

/** A string as a client might send it: short text, any unicode, or one of the adversarial ones. */
export const anyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...WEIRD_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
);

const anyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...WEIRD_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** An array nested `depth` deep: `[[[…]]]`. */
const nested = (depth: number): Json => {
  let v: Json = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

/** A JSON object whose keys may be prototype names, built as JSON.parse builds them. */
const objectOf = (value: fc.Arbitrary<Json>, maxKeys = 4): fc.Arbitrary<Json> =>
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), anyString), value), { maxLength: maxKeys })
    .map((entries) => Object.fromEntries(entries) as Json);

/** Any JSON value, small: scalars of every type, short arrays and objects, nested arrays. */
export const anyJson: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 3, arbitrary: fc.constantFrom<Json>(null, true, false) },
    { weight: 3, arbitrary: anyNumber },
    { weight: 3, arbitrary: anyString },
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 40 }).map(nested) },
    { weight: 1, arbitrary: fc.array(tie("v"), { maxLength: 3 }) },
    { weight: 1, arbitrary: objectOf(tie("v"), 3) },
  ),
})).v;

/** A value that is usually right for the field and often wrong. */
const maybe = <T extends Json>(right: fc.Arbitrary<T>, rightWeight = 3): fc.Arbitrary<Json> =>
  fc.oneof({ weight: rightWeight, arbitrary: right }, { weight: 1, arbitrary: anyJson });

/** A routing label as the gateway accepts it, or a near miss. */
const label = fc.oneof(
  fc.constantFrom("live_ticket_summary", "agent_assist_summary", "batch_recompute_summary", "batch"),
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,8}$/),
  anyString,
);

const text = fc.oneof(
  { weight: 4, arbitrary: fc.lorem({ maxCount: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom(...WEIRD_STRINGS) },
);

/** Optional fields: each key present or not, in random order, with random extra keys among them. */
const fields = (shape: Record<string, fc.Arbitrary<Json>>, extraKeys = 2): fc.Arbitrary<Json> =>
  fc
    .tuple(
      fc.subarray(Object.keys(shape)),
      fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), anyString), anyJson), {
        maxLength: extraKeys,
      }),
    )
    .chain(([keys, extra]) =>
      fc
        .tuple(...keys.map((k) => shape[k]!.map((v) => [k, v] as [string, Json])))
        .chain((own) => fc.shuffledSubarray([...own, ...extra], { minLength: own.length + extra.length })),
    )
    .map((entries) => Object.fromEntries(entries) as Json);

const contentPart = maybe(
  fields({
    type: maybe(fc.constantFrom("text", "image_url", "input_audio")),
    text: maybe(text),
    image_url: maybe(fields({ url: maybe(fc.constant("data:image/png;base64,AAAA")) }, 0)),
  }),
);

const toolCall = maybe(
  fields(
    {
      id: maybe(fc.constant("call_1")),
      type: maybe(fc.constant("function")),
      function: maybe(fields({ name: maybe(fc.constantFrom("lookup", "")), arguments: maybe(text) }, 0)),
    },
    1,
  ),
);

const message = maybe(
  fields({
    role: maybe(fc.constantFrom("system", "user", "assistant", "tool", "developer")),
    content: fc.oneof(
      { weight: 3, arbitrary: text },
      { weight: 2, arbitrary: fc.array(contentPart, { maxLength: 3 }) },
      { weight: 1, arbitrary: anyJson },
    ),
    name: maybe(fc.constantFrom("alice", "bob_1")),
    tool_calls: maybe(fc.array(toolCall, { maxLength: 2 })),
    tool_call_id: maybe(fc.constant("call_1")),
  }),
  5,
);

const tokenCount = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 24 }) },
  { weight: 1, arbitrary: fc.integer({ min: 25, max: 5000 }) },
  { weight: 2, arbitrary: anyJson },
);

/** The fields both APIs share. */
const common = {
  model: maybe(
    fc.constantFrom("summary-default", "tone-a", "tone-b", "split", "strict", "pinned", "no-such-model"),
    5,
  ),
  max_tokens: tokenCount,
  stream: maybe(fc.boolean()),
  stream_options: maybe(fields({ include_usage: maybe(fc.boolean()) }, 1)),
  metadata: maybe(fields({ task: maybe(label), request_class: maybe(label) }, 1)),
  task: maybe(label, 1),
  request_class: maybe(label, 1),
  temperature: maybe(fc.double({ min: 0, max: 2, noNaN: true })),
  user: maybe(fc.constant("u-1")),
};

/** A /v1/chat/completions body (usually an object, sometimes not). */
export const chatBody: fc.Arbitrary<Json> = fc.oneof(
  {
    weight: 12,
    arbitrary: fields({
      ...common,
      messages: fc.oneof(
        { weight: 6, arbitrary: fc.array(message, { minLength: 1, maxLength: 4 }) },
        { weight: 1, arbitrary: anyJson },
      ),
      max_completion_tokens: tokenCount,
    }),
  },
  { weight: 1, arbitrary: anyJson },
);

/** A /v1/completions body. */
export const completionBody: fc.Arbitrary<Json> = fc.oneof(
  {
    weight: 12,
    arbitrary: fields({
      ...common,
      prompt: fc.oneof(
        { weight: 3, arbitrary: text },
        {
          weight: 1,
          arbitrary: fc.array(fc.integer({ min: 0, max: 128000 }), { minLength: 1, maxLength: 8 }),
        },
        { weight: 1, arbitrary: fc.array(text, { minLength: 1, maxLength: 2 }) },
        { weight: 1, arbitrary: anyJson },
      ),
    }),
  },
  { weight: 1, arbitrary: anyJson },
);

/** Header values HTTP can carry: tab, printable ASCII and Latin-1, as Node sends and parses them. */
const headerChar = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
  { weight: 1, arbitrary: fc.constant(0x09) },
);
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  label.filter((s) => /^[\t\x20-\x7e\x80-\xff]*$/.test(s)),
  fc.string({ unit: headerChar.map((c) => String.fromCharCode(c)), maxLength: 20 }),
);

/** The X-AI-* request headers, lowercased as node:http hands them over, each present or not. */
export const aiHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    "x-ai-task": headerValue,
    "x-ai-request-class": headerValue,
    "x-ai-trace-id": headerValue,
    "x-user-id": headerValue,
  },
  { requiredKeys: [] },
);

const goodLabel = fc.constantFrom(
  "live_ticket_summary",
  "agent_assist_summary",
  "batch_recompute_summary",
  "batch",
);
const goodCommon = {
  model: fc.constantFrom("summary-default", "tone-a", "tone-b", "split", "strict", "pinned"),
  max_tokens: fc.integer({ min: 1, max: 24 }),
  stream: fc.boolean(),
  stream_options: fc.record({ include_usage: fc.boolean() }),
  metadata: fc.record({ task: goodLabel, request_class: goodLabel }, { requiredKeys: [] }),
  temperature: fc.double({ min: 0, max: 2, noNaN: true }),
};

/** A chat body of the right shape throughout (what the engine then sees: it may still refuse some). */
export const goodChatBody: fc.Arbitrary<Json> = fc.record(
  {
    ...goodCommon,
    messages: fc.array(
      fc.record({
        role: fc.constantFrom("system", "user", "assistant"),
        content: fc.oneof(
          text,
          fc.array(fc.record({ type: fc.constant("text"), text }), { minLength: 1, maxLength: 2 }),
        ),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    max_completion_tokens: fc.integer({ min: 1, max: 24 }),
  },
  { requiredKeys: ["model", "messages"] },
);

/** A completion body of the right shape throughout. */
export const goodCompletionBody: fc.Arbitrary<Json> = fc.record(
  {
    ...goodCommon,
    prompt: fc.oneof(text, fc.array(fc.integer({ min: 0, max: 30000 }), { minLength: 1, maxLength: 8 })),
  },
  { requiredKeys: ["model", "prompt"] },
);

/** X-AI-* headers the gateway takes: known labels, a sticky key. */
export const goodHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  { "x-ai-task": goodLabel, "x-ai-request-class": goodLabel, "x-user-id": fc.constantFrom("u1", "u2", "u3") },
  { requiredKeys: [] },
);
