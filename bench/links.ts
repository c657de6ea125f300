/**
 * Linked data (issue 21), over HTTP on the built binary:
 * - a base A of 200,000 records linked to a base B of 50,000 (1 to 3 links each): a page of 50 of A
 *   with its relation and two lookups (one a `sum` rollup), against the same page of a base of the
 *   same records without those fields;
 * - `GET /records/{id}/links` of a record of B with 100 incoming links, against a record read;
 * - creates with 3 links into a base of the plain base's fields and a relation, against creates into the plain base;
 * - then in process, on the same database: a stored formula made on the plain base of 200,000
 *   records, then changed: the total time until every record holds its value, and the longest
 *   step of the upkeep (one write transaction, so the longest the writer is held).
 * Writes bench/results/links.md. BENCH_LINKED sets A's size.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { authenticate } from "../src/auth/actor";
import { sourceAttribution } from "../src/changes/propose";
import { type FieldChange, proposeFieldChange } from "../src/changes/proposals";
import { systemClock } from "../src/shared/clock";
import { loadConfig } from "../src/shared/config";
import { findBase } from "../src/content/bases";
import { FILL_STEP_MS, FORMULA_PART } from "../src/content/field-upkeep";
import { wire } from "../src/cli/wiring";
import { closeStore, openStore, startCheckpointer } from "../src/db/client";
import { resolveSpace } from "../src/spaces/resolve";
import { benchHarness, benchServer, comparedRow as row, LISTING_FIELDS, REPO } from "./harness";

const harness = benchHarness();
const port = 7471;
const server = benchServer(harness, port);
const url = (path: string) => `http://127.0.0.1:${port}${path}`;
const A_SIZE = Number(process.env.BENCH_LINKED ?? 200_000);
const B_SIZE = Math.max(1000, A_SIZE / 4);
await server.start();

const bulk = (base: string, records: Record<string, unknown>[]) => server.api("POST", `/api/v1/bases/${base}/records/bulk-change-request`, { records });
const values = (n: number) => ({ title: `paper ${n}`, year: 1900 + (n % 120), venue: `venue ${n % 500}`, pages: n % 1000, notes: "n" });

await server.api("POST", "/api/v1/bases", { slug: "people", name: "People", fields: LISTING_FIELDS });
const people: string[] = [];
for (let made = 0; made < B_SIZE; made += 1000) {
  const proposal = await bulk("people", Array.from({ length: 1000 }, (_, i) => values(made + i)));
  people.push(...proposal.mergeSummary.recordIds);
}
await server.api("POST", "/api/v1/bases", {
  slug: "linked",
  name: "Linked",
  fields: [
    ...LISTING_FIELDS,
    { slug: "people", name: "People", type: "relation", options: { targetBaseSlug: "people" } },
    { slug: "names", name: "Names", type: "lookup", options: { lookup: { relationFieldSlug: "people", targetFieldSlug: "title" } } },
    { slug: "pages_sum", name: "Pages (sum)", type: "lookup", options: { lookup: { relationFieldSlug: "people", targetFieldSlug: "pages", rollup: "sum" } } },
    { slug: "score", name: "Score", type: "formula", options: { formula: { expression: "ROUND({pages_sum} / ({pages} + 1), 2)" } } },
  ],
});
await server.api("POST", "/api/v1/bases", { slug: "plain", name: "Plain", fields: LISTING_FIELDS });
// The creates compare bases that differ by the relation field alone.
await server.api("POST", "/api/v1/bases", { slug: "cited", name: "Cited", fields: [...LISTING_FIELDS, { slug: "people", name: "People", type: "relation", options: { targetBaseSlug: "people" } }] });
const hub = people[0];
const started = performance.now();
for (let made = 0; made < A_SIZE; made += 1000) {
  const batch = Array.from({ length: 1000 }, (_, i) => values(made + i));
  await bulk("plain", batch);
  // 1 to 3 links each; the first 100 records also link the hub.
  await bulk(
    "linked",
    batch.map((fields, i) => {
      const n = made + i;
      const count = 1 + (n % 3);
      const links = Array.from({ length: count }, (_, k) => people[1 + ((n * 7 + k * 13) % (people.length - 1))]);
      return { ...fields, people: n < 100 ? [hub, ...links] : links };
    }),
  );
}
const loadSeconds = (performance.now() - started) / 1000;

const page = (base: string) => harness.wrk(url(`/api/v1/records?baseId=${base}&limit=50`), server.headers);
const recordRead = harness.wrk(url(`/api/v1/records/${hub}`), server.headers);
const linksRead = harness.wrk(url(`/api/v1/records/${hub}/links`), server.headers);
const incoming = (await server.api("GET", `/api/v1/records/${hub}/links`)).length;
const plainPage = page("plain");
const linkedPage = page("linked");
const createScript = (withLinks: boolean) => `wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
local people = {${people.slice(1, 5001).map((id) => `"${id}"`).join(",")}}
request = function()
  local links = ${withLinks ? `',"people":["' .. people[math.random(#people)] .. '","' .. people[math.random(#people)] .. '","' .. people[math.random(#people)] .. '"]'` : "''"}
  return wrk.format(nil, nil, nil, string.format('{"fields":{"title":"t %d","year":%d,"venue":"v","pages":%d,"notes":"n"%s}}', math.random(1e9), math.random(3000), math.random(1000), links))
end`;
const plainCreate = harness.wrk(url("/api/v1/bases/plain/change-requests"), server.headers, { lua: createScript(false) });
const linkedCreate = harness.wrk(url("/api/v1/bases/cited/change-requests"), server.headers, { lua: createScript(true) });
await server.stop();

// ---- a formula made and changed on 200,000 records, in process ----
const store = openStore(server.dbPath);
// As `serve` runs: checkpoints on a thread of their own, never inside a step's commit.
const checkpoints = startCheckpointer(store, server.dbPath, console);
const { ctx, fieldUpkeep: upkeep } = wire(store, loadConfig({ "data-dir": dirname(server.dbPath) }, {}), systemClock, { info() {}, error() {} });
const actor = authenticate(ctx, { apiKey: server.headers.authorization.slice("Bearer ".length), sessionToken: null });
const proposer = { scope: resolveSpace(ctx, actor, "bench"), actor, attribution: sourceAttribution(actor, undefined) };
const steps: number[] = [];
// Each step is one write transaction of the upkeep: its duration is how long it holds the writer.
const step = (upkeep as unknown as { step(tx: unknown): boolean }).step.bind(upkeep);
(upkeep as unknown as { step(tx: unknown): boolean }).step = (tx) => {
  const began = performance.now();
  try {
    return step(tx);
  } finally {
    steps.push(performance.now() - began);
  }
};
upkeep.start(ctx);
const formulaRun = async (change: FieldChange) => {
  await upkeep.settled();
  steps.length = 0;
  const began = performance.now();
  await proposeFieldChange(ctx, proposer, "plain", change, { autoMerge: true });
  await upkeep.settled();
  return { seconds: (performance.now() - began) / 1000, steps: steps.length, longest: Math.max(...steps) };
};
const made = await formulaRun({ operation: "create", slug: "double", name: "Double", type: "formula", options: { formula: { expression: "{pages} * 2" } } });
const doubleId = findBase(ctx, proposer.scope.space.id, "plain").fields.find((field) => field.slug === "double")!.id;
const changed = await formulaRun({ operation: "update", fieldId: doubleId, patch: { options: { formula: { expression: "{pages} * 3 + {year}" } } } });
const wrong = store.sqlite.query("SELECT count(*) AS n FROM records r JOIN bases b ON b.id = r.base_id JOIN nodes n ON n.id = b.node_id WHERE n.slug = 'plain' AND json_extract(r.data, '$.double') IS NOT json_extract(r.data, '$.pages') * 3 + json_extract(r.data, '$.year')").get() as { n: number };
await upkeep.stop();
checkpoints.stop();
await closeStore(store);
if (wrong.n > 0) throw new Error(`${wrong.n} records do not hold the changed formula's value`);

const table = [
  `# bench:links — linked data (issue 21)`,
  "",
  `${A_SIZE.toLocaleString("en")} records linked (1 to 3 links each) to a base of ${B_SIZE.toLocaleString("en")}, and a plain base of the same records; loaded in ${loadSeconds.toFixed(0)} s. wrk, 50 connections, ${harness.DURATION} s a row; the server on core 0, wrk on core 1.`,
  "",
  "| Route | req/s | p50 | p99 | against its reference |",
  "|---|---:|---:|---:|---|",
  row("page of 50, plain base (reference)", plainPage, plainPage, "p50"),
  row("page of 50 with a relation, two lookups (one sum) and a formula", linkedPage, plainPage, "p50"),
  row("GET /records/{id} (reference)", recordRead, recordRead, "p50"),
  row(`GET /records/{id}/links, ${incoming} links`, linksRead, recordRead, "p50"),
  row("create, no relation field (reference)", plainCreate, plainCreate, "rps"),
  row("create with 3 links (the same fields and a relation)", linkedCreate, plainCreate, "rps"),
  "",
  "Targets: the linked page within 1.5x of the plain page's p50; the links read within 1.2x of a record read; creates with 3 links at least 80% of plain creates.",
  "",
  `A stored formula on the plain base's ${A_SIZE.toLocaleString("en")} records, in process on the same file (each step of the upkeep is one write transaction: parts of ${FORMULA_PART} records until ${FILL_STEP_MS} ms of work are spent):`,
  "",
  "| | total | upkeep steps | longest step (writer held) |",
  "|---|---:|---:|---:|",
  `| made (\`{pages} * 2\`) | ${made.seconds.toFixed(1)} s | ${made.steps} | ${made.longest.toFixed(1)} ms |`,
  `| changed (\`{pages} * 3 + {year}\`) | ${changed.seconds.toFixed(1)} s | ${changed.steps} | ${changed.longest.toFixed(1)} ms |`,
];
writeFileSync(join(REPO, "bench/results/links.md"), `${table.join("\n")}\n`);
console.log(table.join("\n"));
