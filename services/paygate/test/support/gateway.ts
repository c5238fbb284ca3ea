import { startTcpFront } from '@platform/testkit/front';
import { type AppOptions, buildApp, type Gateway } from '../../src/app.js';

export interface RunningGateway extends Gateway {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The gateway in-process on port 0 of 127.0.0.1 behind a front whose address is its public URL (the
 * URL is needed before the app is built, the port only once it listens; no freePort() race).
 */
export async function startGateway(options: Omit<AppOptions, 'publicUrl'>): Promise<RunningGateway> {
  const front = await startTcpFront();
  const url = front.url;
  const gateway = await buildApp({ ...options, publicUrl: url });
  const address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  front.target(Number(new URL(address).port));
  return {
    ...gateway,
    url,
    async close() {
      await gateway.app.close();
      await front.close();
    },
  };
}

/** Submits a form as a browser without JavaScript would, without following the redirect. */
export async function postForm(
  url: string,
  fields: Record<string, string>,
): Promise<{ status: number; location: string | null; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}
