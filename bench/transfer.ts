/**
 * Files and data in and out (issue 23), over HTTP on the built binary:
 * - export of a base of 200,000 eight-field records as CSV: records/s and the server's RSS growth;
 * - a preview of a 100,000-row, 8-column CSV (the whole file read), then its import committed (in
 *   parts of 1,000 rows): time and RSS growth;
 * - upload (its length declared, then as a chunked stream) and download of a 200 MB file: the
 *   server's RSS growth, and the download's throughput
 *   against a bare `Bun.file` response from another server in the same run.
 * Writes bench/results/transfer.md. BENCH_EXPORTED sets the base's size.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { contentPath } from "../src/db/content-files";
import { benchHarness, benchServer, REPO, type WrkResult } from "./harness";

process.env.BASALT_MAX_FILE = "256mb";
const harness = benchHarness();
const port = 7473;
const server = benchServer(harness, port);
const url = (path: string) => `http://127.0.0.1:${port}${path}`;
const SIZE = Number(process.env.BENCH_EXPORTED ?? 200_000);
const FILE_MB = 200;
await server.start();

const FIELDS = [
  { slug: "title", name: "Title", type: "text" },
  { slug: "author", name: "Author", type: "text" },
  { slug: "year", name: "Year", type: "number" },
  { slug: "pages", name: "Pages", type: "number" },
  { slug: "status", name: "Status", type: "select", options: { choices: [{ name: "draft" }, { name: "published" }] } },
  { slug: "read", name: "Read", type: "checkbox" },
  { slug: "published", name: "Published", type: "date" },
  { slug: "notes", name: "Notes", type: "longtext" },
];
const row = (n: number) => ({
  title: `A study of things, part ${n}`,
  author: `Author ${n % 997}`,
  year: 1900 + (n % 125),
  pages: 10 + (n % 500),
  status: n % 3 === 0 ? "draft" : "published",
  read: n % 2 === 0,
  published: `20${String(n % 25).padStart(2, "0")}-0${1 + (n % 9)}-1${n % 9}`,
  notes: `Notes on record ${n}: ${"lorem ipsum dolor sit amet ".repeat(6)}`,
});
await server.api("POST", "/api/v1/bases", { slug: "things", name: "Things", fields: FIELDS });
for (let made = 0; made < SIZE; made += 1000) {
  await server.api("POST", "/api/v1/bases/things/records/bulk-change-request", { records: Array.from({ length: 1000 }, (_, i) => row(made + i)) });
}

/** Runs `work` while sampling the server's RSS every 20 ms: its result, seconds, and the RSS growth in MB. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number; growthMb: number }> {
  Bun.gc(true);
  const before = harness.rssMb(server.pid());
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, harness.rssMb(server.pid()))), 20);
  const started = performance.now();
  try {
    const result = await work();
    return { result, seconds: (performance.now() - started) / 1000, growthMb: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

/** Reads a response to its end, holding one chunk at a time: its bytes, and its lines when asked (a scan the download rows leave out). */
async function drain(response: Response, countLines = false): Promise<{ bytes: number; lines: number }> {
  let bytes = 0;
  let lines = 0;
  for await (const chunk of response.body!) {
    bytes += chunk.byteLength;
    if (countLines) for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return { bytes, lines };
}

const exportRun = await measured(async () => drain(await fetch(url("/api/v1/bases/things/export?format=csv"), { headers: server.headers }), true));
if (exportRun.result.lines !== SIZE + 1) throw new Error(`the export wrote ${exportRun.result.lines} lines, not ${SIZE + 1}`);

const PREVIEWED = 100_000;
const csv = ["title,author,year,pages,status,read,published,notes", ...Array.from({ length: PREVIEWED }, (_, n) => Object.values(row(n)).map((value) => (typeof value === "string" && value.includes(",") ? `"${value}"` : String(value))).join(","))].join("\n");
const previewRun = await measured(async () => {
  const response = await fetch(url("/api/v1/bases/things/imports?preview=true"), { method: "POST", headers: { ...server.headers, "content-type": "text/csv" }, body: csv });
  return (await response.json()) as { rowCount: number; errorCount: number };
});
if (previewRun.result.rowCount !== PREVIEWED || previewRun.result.errorCount !== 0) throw new Error(`preview: ${JSON.stringify(previewRun.result)}`);
// Reads of another base, alone and while the import runs (wrk starts once the file is sent and checked).
await server.api("POST", "/api/v1/bases", { slug: "other", name: "Other", fields: FIELDS });
const [otherRecord] = (await server.api("POST", "/api/v1/bases/other/records/bulk-change-request", { records: [row(1), row(2)] })).operations as { targetRecordId: string }[];
const otherRead = url(`/api/v1/records/${otherRecord.targetRecordId}`);
const readsAlone = harness.wrk(otherRead, server.headers);
let readsDuringImport: WrkResult | null = null;
const commitRun = await measured(async () => {
  const importing = fetch(url("/api/v1/bases/things/imports"), { method: "POST", headers: { ...server.headers, "content-type": "text/csv" }, body: csv });
  await Bun.sleep(1500);
  readsDuringImport = await harness.wrkMeanwhile(otherRead, server.headers);
  const response = await importing;
  return (await response.json()) as { rowCount: number; changeRequests: { status: string }[] };
});
if (commitRun.result.rowCount !== PREVIEWED || commitRun.result.changeRequests.some((part) => part.status !== "merged")) throw new Error(`import: ${JSON.stringify(commitRun.result).slice(0, 300)}`);

const chunk = new Uint8Array(1 << 20).map((_, i) => (i * 31) & 0xff);
const bigFile = join(harness.dir, "big.bin");
const sink = Bun.file(bigFile).writer();
for (let i = 0; i < FILE_MB; i++) sink.write(chunk);
await sink.end();
const upload = async (body: BodyInit) => {
  const response = await fetch(url("/api/v1/assets?fileName=big.bin"), { method: "POST", headers: { ...server.headers, "content-type": "application/octet-stream" }, body });
  const asset = (await response.json()) as { id: string; size: number; contentHash: string };
  if (asset.size !== FILE_MB << 20) throw new Error(`upload: ${JSON.stringify(asset)}`);
  return asset;
};
// A file sent as curl, browsers and SDKs send one (its length declared), then the same bytes as a stream of unknown length.
const uploadRun = await measured(() => upload(Bun.file(bigFile)));
const streamedUploadRun = await measured(() => {
  let sent = 0;
  return upload(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === FILE_MB) controller.close();
        else controller.enqueue(chunk);
      },
    }),
  );
});

const downloads = async (target: string, headers: Record<string, string>) => {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await measured(async () => drain(await fetch(target, { headers }))));
  return runs.sort((a, b) => a.seconds - b.seconds)[1];
};
const downloadRun = await downloads(url(`/api/v1/assets/${uploadRun.result.id}/content`), server.headers);
const stored = contentPath(join(harness.dir, "data"), uploadRun.result.contentHash.slice(7));
const floor = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(Bun.file(stored)) });
const floorRun = await downloads(`http://127.0.0.1:${floor.port}/`, {});
await floor.stop(true);
await server.stop();

const mbps = (run: { seconds: number }) => FILE_MB / run.seconds;
const table = [
  "# bench:transfer — files and data in and out (issue 23)",
  "",
  `A base of ${SIZE.toLocaleString("en")} records of eight fields; the built binary on core 0. RSS growth is the server's peak during the run over its RSS before it.`,
  "",
  "| What | Result | RSS growth | Target |",
  "|---|---:|---:|---|",
  `| export of ${SIZE.toLocaleString("en")} records as CSV (${(exportRun.result.bytes / 1e6).toFixed(0)} MB) | ${Math.round(SIZE / exportRun.seconds).toLocaleString("en")} records/s | ${exportRun.growthMb.toFixed(0)} MB | 50,000 records/s, under 50 MB |`,
  `| preview of a ${PREVIEWED.toLocaleString("en")}-row, 8-column CSV (${(csv.length / 1e6).toFixed(0)} MB), every row read and checked | ${previewRun.seconds.toFixed(1)} s | ${previewRun.growthMb.toFixed(0)} MB | — |`,
  `| import of that file, committed (${commitRun.result.changeRequests.length} change requests of ${PREVIEWED / commitRun.result.changeRequests.length} rows, merged) | ${commitRun.seconds.toFixed(1)} s | ${commitRun.growthMb.toFixed(0)} MB | under 30 s, under 150 MB |`,
  `| reads of another base's record while that import runs, against the same reads alone | ${readsDuringImport!.rps.toFixed(0)} against ${readsAlone.rps.toFixed(0)} req/s: ${((readsDuringImport!.rps / readsAlone.rps) * 100).toFixed(0)}% | — | at least 70% |`,
  `| upload of a ${FILE_MB} MB file (its length declared) | ${mbps(uploadRun).toFixed(0)} MB/s | ${uploadRun.growthMb.toFixed(0)} MB | under 32 MB |`,
  `| the same bytes sent as a stream of unknown length (chunked) | ${mbps(streamedUploadRun).toFixed(0)} MB/s | ${streamedUploadRun.growthMb.toFixed(0)} MB | — |`,
  `| download of that file (median of 3) | ${mbps(downloadRun).toFixed(0)} MB/s (${((mbps(downloadRun) / mbps(floorRun)) * 100).toFixed(0)}% of a bare Bun.file response's ${mbps(floorRun).toFixed(0)} MB/s) | ${downloadRun.growthMb.toFixed(0)} MB | 80% of Bun.file, under 32 MB |`,
];
writeFileSync(join(REPO, "bench/results/transfer.md"), `${table.join("\n")}\n`);
console.log(table.join("\n"));
