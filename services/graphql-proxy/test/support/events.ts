/** A server-sent events stream read in the background: `events` fills as they arrive. */
export interface EventStream {
  readonly events: Array<{ event: string; data: Record<string, unknown> }>;
  close(): void;
}

export async function openEventStream(url: string): Promise<EventStream> {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  if (!response.ok || !response.body) throw new Error(`event stream ${url}: HTTP ${response.status}`);
  const events: EventStream['events'] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        }
      }
    } catch {
      // closed (the test's close(), or the instance was killed)
    }
  })();
  return { events, close: () => controller.abort() };
}
