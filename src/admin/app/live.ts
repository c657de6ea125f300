import { session } from "./api";

/** An event as the stream sends it (`data` of `GET /api/v1/events/stream`). */
export interface LiveEvent {
  id: string;
  type: string;
  spaceId: string;
  baseId: string | null;
  data: Record<string, any>;
}

/** How long the page waits before it reconnects a stream that ended (a restart, a network change). */
const RECONNECT_MS = [500, 1000, 2000, 5000];

/**
 * The space's events as they commit, read from the stream with the page's session and space (a
 * fetch, not `EventSource`, which cannot send the space header). A dropped stream reconnects with
 * the last event's id, so no event is missed; `reset` (the server no longer holds what was missed)
 * is passed on as an event of that type. Answers how to stop.
 */
export function followEvents(onEvent: (event: LiveEvent) => void): () => void {
  const stopper = new AbortController();
  let lastId: string | null = null;
  const follow = async (attempt: number): Promise<void> => {
    try {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (session.space) headers["x-basalt-space"] = session.space;
      if (lastId) headers["last-event-id"] = lastId;
      const response = await fetch("/api/v1/events/stream", { headers, credentials: "same-origin", signal: stopper.signal });
      // Not allowed (signed out, or no longer a member): stop. Anything else (a restart's 503) is tried again.
      if (response.status === 401 || response.status === 403) return;
      if (!response.ok || !response.body) throw new Error(`the stream answered ${response.status}`);
      attempt = 0;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (let part = await reader.read(); !part.done; part = await reader.read()) {
        buffer += part.value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = parseFrame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (!frame) continue;
          if (frame.id) lastId = frame.id;
          onEvent(frame.event === "reset" ? { id: "", type: "reset", spaceId: "", baseId: null, data: {} } : (JSON.parse(frame.data) as LiveEvent));
        }
      }
    } catch {
      if (stopper.signal.aborted) return;
    }
    if (stopper.signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS[Math.min(attempt, RECONNECT_MS.length - 1)]));
    if (!stopper.signal.aborted) void follow(attempt + 1);
  };
  void follow(0);
  return () => stopper.abort();
}

/** A frame's id, event and data; null for a comment. */
function parseFrame(block: string): { id?: string; event?: string; data: string } | null {
  const frame: { id?: string; event?: string; data: string } = { data: "" };
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const field = line.slice(0, colon);
    const value = line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") frame.id = value;
    else if (field === "event") frame.event = value;
    else if (field === "data") frame.data += value;
  }
  return frame.event ? frame : null;
}
