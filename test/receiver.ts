/** A real HTTP receiver on loopback that records what it gets and answers as told. */
export class Receiver {
  readonly received: { headers: Record<string, string>; body: string; at: number }[] = [];
  answers: (number | { status: number; headers?: Record<string, string>; delayMs?: number })[] = [];
  private readonly server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      this.received.push({ headers: Object.fromEntries(request.headers), body: await request.text(), at: performance.now() });
      const next = this.answers.shift() ?? 200;
      const answer = typeof next === "number" ? { status: next } : next;
      if (answer.delayMs) await Bun.sleep(answer.delayMs);
      return new Response(`answer ${answer.status}`, { status: answer.status, headers: answer.headers });
    },
  });
  readonly url = `http://127.0.0.1:${this.server.port}/hook`;
  stop() {
    this.server.stop(true);
  }
}
