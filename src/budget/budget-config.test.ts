import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readEnvelope } from "../config/envelope.js";
import { formatPath, IssueList } from "../config/errors.js";
import { parseYamlText } from "../config/yaml-source.js";
import { mergeBudgets, type ParsedBudget, type PlacedBudget, parseInferenceBudget } from "./budget-config.js";

const SEED = `apiVersion: ai.example.com/v1alpha1
kind: InferenceBudget
metadata:
  name: support-summary-budget
spec:
  timeZone: Asia/Shanghai
  dayStartsAt: "00:00"
  tenants:
    - name: support-basic
      dailyInputTokens: 120000000
      dailyOutputTokens: 18000000
      concurrentRequests: 80
      maxSingleInputTokens: 12000
    - name: quality-job
      dailyInputTokens: 400000000
      dailyOutputTokens: 50000000
      concurrentRequests: 12
      maxSingleInputTokens: 65536
      allowedWindows:
        - "20:00-08:30"
`;

/** Parses one document the way the loader does; issues as `line:col path: message`. */
function parse(text: string, file = "budget.yaml") {
  const { documents, errors } = parseYamlText(file, text);
  assert.deepEqual(errors, []);
  const source = documents[0]!;
  const issues = new IssueList();
  const env = readEnvelope(source.value, issues);
  assert.ok(env, JSON.stringify(issues.items));
  const budget = parseInferenceBudget(env, issues);
  const show = (i: IssueList) =>
    i.items.map((x) => {
      const p = source.locate(x.path, x.at);
      return `${p.line}:${p.column} ${formatPath(x.path)}: ${x.message}`;
    });
  return { budget, issues, show: () => show(issues) };
}

function doc(name: string, spec: string): string {
  return `apiVersion: ai.example.com/v1alpha1\nkind: InferenceBudget\nmetadata: { name: ${name} }\nspec:\n${spec}`;
}

/** Error messages without their positions. */
function problems(spec: string): string[] {
  return parse(doc("b", spec))
    .show()
    .map((s) => s.replace(/^\d+:\d+ /, ""));
}

describe("parseInferenceBudget", () => {
  it("reads seed 004's document into frozen typed values", () => {
    const { budget, issues } = parse(SEED);
    assert.equal(issues.items.length, 0);
    assert.ok(budget);
    assert.equal(budget.name, "support-summary-budget");
    assert.equal(budget.timeZone, "Asia/Shanghai");
    assert.equal(budget.dayStartsAtMinutes, 0);
    assert.deepEqual(budget.tenants[0], {
      name: "support-basic",
      dailyInputTokens: 120000000,
      dailyOutputTokens: 18000000,
      concurrentRequests: 80,
      maxSingleInputTokens: 12000,
      allowedWindows: [],
    });
    assert.deepEqual(budget.tenants[1]!.allowedWindows, [{ startMinutes: 1200, endMinutes: 510 }]);
    assert.ok(Object.isFrozen(budget.tenants[1]) && Object.isFrozen(budget.tenants[1]!.allowedWindows));
    assert.deepEqual(
      [...budget.tenantIndex],
      [
        ["support-basic", 0],
        ["quality-job", 1],
      ],
    );
  });

  it("defaults to UTC, midnight and unlimited", () => {
    const { budget, issues } = parse(doc("b", "  tenants:\n    - name: free\n"));
    assert.equal(issues.items.length, 0);
    assert.equal(budget?.timeZone, "UTC");
    assert.equal(budget?.dayStartsAtMinutes, 0);
    assert.deepEqual(budget?.tenants[0], {
      name: "free",
      dailyInputTokens: null,
      dailyOutputTokens: null,
      concurrentRequests: null,
      maxSingleInputTokens: null,
      allowedWindows: [],
    });
    assert.equal(parse(doc("b", '  dayStartsAt: "06:30"\n  tenants: []\n')).budget?.dayStartsAtMinutes, 390);
  });

  it("names each window's YAML path and position", () => {
    const text = SEED.replace('"20:00-08:30"', '"20:00-8:30"');
    const { budget, show } = parse(text);
    assert.deepEqual(show(), [
      '20:11 spec.tenants[1].allowedWindows[0]: "20:00-8:30" is not a window: write "HH:MM-HH:MM"',
    ]);
    assert.ok(budget, "the document's other values still parse");
    assert.equal(budget.tenants.length, 1);
  });

  it("refuses bad limits, names, zones and unknown fields", () => {
    assert.deepEqual(
      problems(`  timeZone: Asia/Shangai
  dayStartsAt: "6:00"
  tenants:
    - name: a
      dailyInputTokens: 0
      dailyOutputTokens: 1.5
      concurrentRequests: "80"
      maxSingleInputToken: 100
    - { name: "Bad Name" }
    - 7
    - { allowedWindows: ["10:00-10:00", "00:00-24:00", "00:00-24:00"] }
`),
      [
        'spec.timeZone: "Asia/Shangai" is not an IANA time zone (e.g. "Asia/Shanghai", "UTC") (did you mean "Asia/Shanghai"?)',
        'spec.dayStartsAt: "6:00" is not a time of day: write "HH:MM" from "00:00" to "23:59"',
        "spec.tenants[0].dailyInputTokens: must be a positive integer, got 0",
        "spec.tenants[0].dailyOutputTokens: must be an integer, got a number (1.5)",
        'spec.tenants[0].concurrentRequests: must be an integer, got a string ("80")',
        'spec.tenants[0].maxSingleInputToken: unknown field "maxSingleInputToken" (did you mean "maxSingleInputTokens"?)',
        "spec.tenants[1].name: \"Bad Name\" is not valid: use letters, digits, '.', '_', ':' and '-', starting with a letter or digit",
        "spec.tenants[2]: must be a map, got a number (7)",
        'spec.tenants[3]: missing required field "name"',
        'spec.tenants[3].allowedWindows[2]: duplicate value "00:00-24:00"',
      ],
    );
    assert.deepEqual(problems('  tenants:\n    - { name: a, allowedWindows: ["10:00-10:00"] }\n'), [
      'spec.tenants[0].allowedWindows[0]: "10:00-10:00" starts and ends at the same time: write "00:00-24:00" for all day',
    ]);
    assert.deepEqual(problems("  tenant: []\n"), [
      'spec: missing required field "tenants"',
      'spec.tenant: unknown field "tenant" (did you mean "tenants"?)',
    ]);
    assert.equal(parse(doc("b", "  timeZone: Asia/Shangai\n  tenants: []\n")).budget, undefined);
  });

  it("refuses a tenant listed twice in one document", () => {
    assert.deepEqual(problems("  tenants:\n    - { name: a }\n    - { name: b }\n    - { name: a }\n"), [
      'spec.tenants[2].name: tenant "a" is already listed at spec.tenants[0]',
    ]);
  });

  it("warns about an empty tenant list and a single request above the daily budget", () => {
    const { issues } = parse(
      doc("b", "  tenants:\n    - { name: a, dailyInputTokens: 100, maxSingleInputTokens: 500 }\n"),
    );
    assert.equal(issues.errorCount, 0);
    assert.deepEqual(
      issues.items.map((i) => `${i.severity} ${formatPath(i.path)}: ${i.message}`),
      [
        "warning spec.tenants[0].maxSingleInputTokens: is above dailyInputTokens (100): a request that large is refused by the daily budget anyway",
      ],
    );
    const empty = parse(doc("b", "  tenants: []\n")).issues;
    assert.deepEqual(
      empty.items.map((i) => i.severity),
      ["warning"],
    );
  });
});

describe("mergeBudgets", () => {
  function placed(name: string, spec: string): PlacedBudget & { budget: ParsedBudget } {
    const { budget, issues } = parse(doc(name, spec));
    assert.ok(budget);
    return { budget, issues, where: `${name}.yaml:1` };
  }
  const messages = (p: PlacedBudget) => p.issues.items.map((i) => `${formatPath(i.path)}: ${i.message}`);

  it("merges tenants of every document into one frozen config", () => {
    const a = placed("a", "  timeZone: Asia/Shanghai\n  tenants: [{ name: x, concurrentRequests: 2 }]\n");
    const b = placed("b", "  timeZone: Asia/Shanghai\n  tenants: [{ name: y }]\n");
    const config = mergeBudgets([a, b]);
    assert.equal(config.timeZone, "Asia/Shanghai");
    assert.deepEqual([...config.tenants.keys()], ["x", "y"]);
    assert.equal(config.tenants.get("x")?.concurrentRequests, 2);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.tenants.get("y")));
    assert.deepEqual([...messages(a), ...messages(b)], []);
    assert.deepEqual(mergeBudgets([]), { timeZone: "UTC", dayStartsAtMinutes: 0, tenants: new Map() });
  });

  it("refuses a tenant in two documents, naming both", () => {
    const a = placed("a", "  tenants: [{ name: x, concurrentRequests: 2 }]\n");
    const b = placed("b", "  tenants: [{ name: y }, { name: x, concurrentRequests: 9 }]\n");
    const config = mergeBudgets([a, b]);
    assert.deepEqual(messages(a), []);
    assert.deepEqual(messages(b), [
      'spec.tenants[1].name: tenant "x" is already budgeted by InferenceBudget "a" (a.yaml:1): a tenant may appear in one InferenceBudget only',
    ]);
    assert.equal(config.tenants.get("x")?.concurrentRequests, 2, "the first document's entry is kept");
  });

  it("refuses documents that disagree on timeZone or dayStartsAt, defaults included", () => {
    const a = placed("a", "  timeZone: Asia/Shanghai\n  tenants: []\n");
    const b = placed("b", '  dayStartsAt: "06:00"\n  tenants: []\n');
    mergeBudgets([a, b]);
    assert.deepEqual(messages(b).slice(1), [
      'spec.timeZone: timeZone "UTC" differs from InferenceBudget "a" (a.yaml:1)\'s "Asia/Shanghai": budget documents share one day, give every one the same timeZone',
      'spec.dayStartsAt: dayStartsAt "06:00" differs from InferenceBudget "a" (a.yaml:1)\'s "00:00": give every budget document the same dayStartsAt',
    ]);
  });
});
