import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An in-process OTLP/HTTP receiver collecting the JSON export requests sent to /v1/traces. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number; message?: string };
  attributes?: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
}

export interface ExportRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

export interface OtlpReceiver {
  readonly url: string;
  readonly received: { headers: Record<string, unknown>; body: ExportRequest }[];
  spans(): OtlpSpan[];
  clear(): void;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: { headers: Record<string, unknown>; body: ExportRequest }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('application/json')) {
        received.push({
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest,
        });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    spans: () =>
      received.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans))),
    clear: () => {
      received.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
