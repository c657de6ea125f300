/**
 * `bun bench/allocations.ts`: how many bytes one direct create (the request of `bun run bench`)
 * allocates on JavaScriptCore's heap, and what the collections cost. It runs itself again with
 * JavaScriptCore's GC log on (`BUN_JSC_logGC=1`; not concurrent, so each collection logs on one
 * line) and adds up, over `BENCH_CREATES` creates (50 at a time, so they group-commit as under
 * wrk) after a warm-up, the bytes each collection says were
 * allocated since the one before (the heap's size when one starts less its size when the one
 * before ended), and the collections' own time. The bytes move less with the machine's load than
 * CPU time does, but still by about ±3 KB between runs of the same code (the sizes are the
 * collector's estimates). `BENCH_FLOOR=1` counts the floor's create (bench/floor.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

process.env.NODE_ENV ??= "production";
const CREATES = Number(process.env.BENCH_CREATES ?? 20000);
const START = "-- creates start --";
const END = "-- creates end --";

if (!process.env.BUN_JSC_logGC) {
  const child = Bun.spawnSync([process.execPath, import.meta.path], { env: { ...process.env, BUN_JSC_logGC: "1", BUN_JSC_useConcurrentGC: "0" }, stdout: "pipe", stderr: "pipe" });
  const log = `${child.stdout.toString()}${child.stderr.toString()}`;
  if (child.exitCode !== 0) throw new Error(log.slice(-2000));
  // Each collection logs the heap's size when it starts and when it ends: what grew in between was
  // allocated. Counted from the first collection among the creates to the last, over the batches
  // between them (each batch logs a line), since collections come when they will.
  const during = log.slice(log.indexOf(START), log.indexOf(END));
  const marks = [...during.matchAll(/-- batch --|START M (\d+)kb => (Eden|Full)Collection.*?=> (\d+)kb, p=.*?cycle ([\d.]+)ms/g)];
  const collections = marks.filter((mark) => mark[1] !== undefined);
  if (collections.length < 2) throw new Error("fewer than two collections among the creates: raise BENCH_CREATES");
  let bytes = 0;
  let ms = 0;
  let batches = 0;
  let lastEnd: number | null = null;
  for (const mark of marks) {
    if (mark[1] === undefined) {
      if (lastEnd !== null) batches++;
      continue;
    }
    if (lastEnd !== null) {
      bytes += (Number(mark[1]) - lastEnd) * 1024;
      ms += Number(mark[4]);
    }
    lastEnd = Number(mark[3]);
    if (mark === collections.at(-1)) break;
  }
  const creates = batches * 50;
  const who = process.env.BENCH_FLOOR === "1" ? "floor" : "Basalt";
  console.log(
    `${who}: ${(bytes / creates / 1024).toFixed(2)} KB allocated a create, over ${creates} creates and ${collections.length - 1} collections ` +
      `(${collections.filter((mark) => mark[2] === "Full").length} of them full) that took ${((ms * 1000) / creates).toFixed(1)} µs a create`,
  );
  process.exit(0);
}

const { benchCreates } = await import("./in-process");

const dir = mkdtempSync(join(tmpdir(), "basalt-allocations-"));
const { close, createOne } = await benchCreates(dir);
const batch = async () => {
  const responses = await Promise.all(Array.from({ length: 50 }, createOne));
  for (const response of responses) {
    if (response.status !== 201) throw new Error(`${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  }
};
// Warm: the JIT's own allocations and the caches' first fills are not a create's.
for (let i = 0; i < 100; i++) await batch();
console.error(START);
for (let done = 0; done < CREATES; done += 50) {
  await batch();
  console.error("-- batch --");
}
console.error(END);
await close();
rmSync(dir, { recursive: true, force: true });
