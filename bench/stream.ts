/**
 * `bun run bench:stream` (issue 24): the live event stream of the built binary.
 *  A. 1,000 idle subscribers: the server's memory for each (RSS after they connect, over RSS before).
 *  B. 200 subscribers while records are created at 500 a second: from each event's commit (its
 *     `timestamp`) to its arrival at every subscriber, p50 and p99.
 * The server runs on core 0, the subscribers and the writer in this process on core 1 (whose fetch
 * may hold 4,096 connections: `BUN_CONFIG_MAX_HTTP_REQUESTS`, set by the package script; Bun's
 * default of 256 would leave the rest waiting).
 * Writes bench/results/stream.md.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchHarness, benchServer, REPO } from "./harness";

// One key holds every subscriber here: the per-key, per-account and server caps (16, 64, 2,000 by default) raised for the bench.
for (const name of ["BASALT_MAX_STREAMS_PER_KEY", "BASALT_MAX_STREAMS_PER_USER", "BASALT_MAX_STREAMS"]) process.env[name] ??= "4096";
const harness = benchHarness();
const port = 7481;
const server = benchServer(harness, port);
const url = (path: string) => `http://127.0.0.1:${port}${path}`;
const IDLE = Number(process.env.BENCH_IDLE ?? 1000);
const LIVE = Number(process.env.BENCH_LIVE ?? 200);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

await server.start();
await server.api("POST", "/api/v1/bases", { slug: "live", name: "Live", fields: [{ slug: "title", name: "Title", type: "text" }] });

/** A subscriber: reads its stream and, when given `delays`, records each created record's delay from its commit (the others only drain their bytes, so this process keeps up). */
async function subscribe(delays: number[] | null, opened: { n: number }): Promise<{ close(): void; done: Promise<void> }> {
  const stopper = new AbortController();
  const response = await fetch(url("/api/v1/events/stream"), { headers: server.headers, signal: stopper.signal });
  if (!response.ok || !response.body) throw new Error(`stream: ${response.status}`);
  opened.n++;
  const done = (async () => {
    try {
      if (!delays) {
        for await (const _ of response.body!) continue;
        return;
      }
      let buffer = "";
      for await (const part of response.body!.pipeThrough(new TextDecoderStream())) {
        buffer += part;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!frame.includes("event: record.created")) continue;
          delays.push(Date.now() - Date.parse(/"timestamp":"([^"]+)"/.exec(frame)![1]));
        }
      }
    } catch {}
  })();
  return { close: () => stopper.abort(), done };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

// ---- A. idle subscribers ----
await Bun.sleep(500);
Bun.gc(true);
const before = harness.rssMb(server.pid());
const opened = { n: 0 };
const idle = [];
for (let i = 0; i < IDLE; i += 50) idle.push(...(await Promise.all(Array.from({ length: Math.min(50, IDLE - i) }, () => subscribe(null, opened)))));
await Bun.sleep(2000);
const after = harness.rssMb(server.pid());
const perSubscriberKb = ((after - before) * 1024) / IDLE;
for (const subscriber of idle) subscriber.close();
await Promise.all(idle.map((subscriber) => subscriber.done));
await Bun.sleep(1000);

// ---- B. subscribers during creates ----
/** Subscribers that time their events; the others only read theirs. */
const TIMED = 20;
const delays: number[] = [];
const live = await Promise.all(Array.from({ length: LIVE }, (_, i) => subscribe(i < TIMED ? delays : null, { n: 0 })));
const created = { ok: 0, failed: 0 };
/** Each create's answer time, from request to response, as its client sees it. */
const createTimes: number[] = [];
const began = performance.now();
const writes: Promise<void>[] = [];
for (let n = 0; performance.now() - began < SECONDS * 1000; n++) {
  const due = began + (n * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await Bun.sleep(wait);
  const sent = performance.now();
  writes.push(
    fetch(url("/api/v1/bases/live/change-requests"), { method: "POST", headers: { ...server.headers, "content-type": "application/json" }, body: JSON.stringify({ fields: { title: `t ${n}` } }) }).then(
      (response) => void (createTimes.push(performance.now() - sent), response.ok ? created.ok++ : created.failed++),
    ),
  );
}
await Promise.all(writes);
const rate = created.ok / ((performance.now() - began) / 1000);
await Bun.sleep(1000);
for (const subscriber of live) subscriber.close();
await server.stop();

const table = [
  "# bench:stream — the live event stream (issue 24)",
  "",
  `The built binary on core 0; subscribers and the writer in the bench process on core 1.`,
  "",
  "| What | Measured | Target |",
  "|---|---:|---|",
  `| ${IDLE.toLocaleString("en")} idle subscribers: server memory each | ${perSubscriberKb.toFixed(1)} KB (RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB) | under 20 KB |`,
  `| ${LIVE} subscribers, creates at ${RATE}/s for ${SECONDS} s (${rate.toFixed(0)}/s done, ${created.failed} failed): commit to arrival, p50 | ${percentile(delays, 50)} ms | — |`,
  `| the same, p99 (timed at ${TIMED} of the subscribers: ${delays.length.toLocaleString("en")} arrivals of ${(created.ok * TIMED).toLocaleString("en")} expected) | ${percentile(delays, 99)} ms | under 100 ms |`,
  `| the creates meanwhile: answer time p50 / p99 | ${percentile(createTimes, 50).toFixed(1)} / ${percentile(createTimes, 99).toFixed(1)} ms | p99 under 100 ms |`,
  "",
].join("\n");
console.log(table);
writeFileSync(join(REPO, "bench/results/stream.md"), table);
process.exit(0);
