import { freePort } from '@platform/testkit/ports';
import { type AppOptions, buildApp, type Gateway } from '../../src/app.js';

export interface RunningGateway extends Gateway {
  readonly url: string;
  close(): Promise<void>;
}

/** The gateway in-process on a free port of 127.0.0.1 (its public URL is that address). */
export async function startGateway(options: Omit<AppOptions, 'publicUrl'>): Promise<RunningGateway> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const gateway = await buildApp({ ...options, publicUrl: url });
  await gateway.app.listen({ port, host: '127.0.0.1' });
  return {
    ...gateway,
    url,
    async close() {
      await gateway.app.close();
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
