/**
 * The webhook receiver of `bench/webhooks.ts`, in its own process so that the load generator's
 * pauses never count as delivery latency. Arrival times are wall-clock milliseconds
 * (`performance.timeOrigin + performance.now()`), comparable across processes. Usage:
 * `bun bench/receiver.ts <port>`; `POST /hold` holds answers until `POST /release`,
 * `GET /arrivals` answers `{ "<path> <record id>": ms }`, `GET /count` the number received.
 */
const arrivals: Record<string, number> = {};
let received = 0;
let held: (() => void)[] | null = null;

Bun.serve({
  port: Number(process.argv[2]),
  hostname: "127.0.0.1",
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === "/hold") {
      held = [];
      return new Response("held");
    }
    if (pathname === "/release") {
      const waiting = held ?? [];
      held = null;
      for (const resume of waiting) resume();
      return new Response("released");
    }
    if (pathname === "/arrivals") return Response.json(arrivals);
    if (pathname === "/count") return Response.json(received);
    if (pathname === "/dead") return new Promise<Response>(() => undefined);
    if (held) await new Promise<void>((resume) => held!.push(resume));
    const body = JSON.parse(await request.text());
    received++;
    const id = body.data?.record?.id;
    if (id) arrivals[`${pathname} ${id}`] = performance.timeOrigin + performance.now();
    return new Response(null, { status: 204 });
  },
});
console.log("receiver ready");
