import http from 'node:http';
import { listenOnFreePort, type RunningApp } from '@platform/testkit/app';

/**
 * A real HTTP hop placed between the proxy and the blog, so tests can count what reaches the
 * upstream, lose an answer after the upstream executed the request, or hang like a stuck server.
 */
export interface Relay {
  readonly url: string;
  /** Bodies of the POST requests that reached the relay. */
  readonly bodies: string[];
  /** The same requests with the Authorization header they carried. */
  readonly requests: {
    readonly body: string;
    readonly authorization: string | undefined;
    readonly idempotencyKey: string | undefined;
    readonly at: number;
  }[];
  /**
   * The next `n` requests whose body contains `matching` are forwarded, but their answers are
   * dropped (connection destroyed). Other requests (a proxy's background probe) pass untouched.
   */
  dropAnswers(n: number, matching: string): void;
  /** The next `n` requests whose body contains `matching` never reach the target (connection cut). */
  dropRequests(n: number, matching: string): void;
  /** While true, requests are accepted and never answered. */
  hang(on: boolean): void;
  /**
   * Requests whose body contains `matching` wait at the relay until `release()`, then go on; the
   * first `passing` of them (default none) go through at once.
   */
  hold(matching: string, passing?: number): { release(): void };
  /**
   * The next request whose body contains `matching` goes to the target, which executes it; its
   * answer waits at the relay until `release()` (its caller sees nothing: sent, not yet answered).
   * `answered()` is true once the target has answered it.
   */
  holdAnswer(matching: string): { answered(): boolean; release(): void };
  close(): Promise<void>;
}

export async function startRelay(targetUrl: string): Promise<Relay> {
  const target = new URL(targetUrl);
  const bodies: string[] = [];
  const requests: Relay['requests'] = [];
  let drops = 0;
  let dropMatching = '';
  let cuts = 0;
  let cutMatching = '';
  let hanging = false;
  let holdMatching = '';
  let holdPassing = 0;
  let held: (() => void)[] = [];
  let answerMatching = '';
  let answerHeld: { answered: boolean; deliver: (() => void) | undefined; released: boolean } | undefined;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      bodies.push(text);
      const key = request.headers['idempotency-key'];
      requests.push({
        body: text,
        authorization: request.headers.authorization,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        at: Date.now(),
      });
      if (hanging) return;
      if (cuts > 0 && text.includes(cutMatching)) {
        cuts -= 1;
        response.socket?.destroy();
        return;
      }
      const drop = drops > 0 && text.includes(dropMatching);
      if (drop) drops -= 1;
      const holdAnswer = answerMatching !== '' && text.includes(answerMatching) ? answerHeld : undefined;
      if (holdAnswer) answerMatching = '';
      const forward = () => {
        const forwarded = http.request(
          target,
          { method: request.method, headers: { ...request.headers, host: target.host } },
          (answer) => {
            if (drop) {
              answer.resume();
              answer.on('end', () => response.socket?.destroy());
              return;
            }
            const deliver = () => {
              response.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(response);
            };
            if (holdAnswer && !holdAnswer.released) {
              holdAnswer.answered = true;
              holdAnswer.deliver = deliver;
              return;
            }
            deliver();
          },
        );
        forwarded.on('error', () => response.socket?.destroy());
        forwarded.end(body);
      };
      const holding = holdMatching !== '' && text.includes(holdMatching);
      if (holding && holdPassing > 0) holdPassing -= 1;
      else if (holding) {
        held.push(forward);
        return;
      }
      forward();
    });
  });
  const running: RunningApp = await listenOnFreePort({
    listen: ({ port, host }) =>
      new Promise((resolve) =>
        server.listen(port, host, () =>
          resolve(`http://${host}:${(server.address() as { port: number }).port}`),
        ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return {
    url: `${running.url}${target.pathname}`,
    bodies,
    requests,
    dropAnswers: (n, matching) => {
      drops = n;
      dropMatching = matching;
    },
    dropRequests: (n, matching) => {
      cuts = n;
      cutMatching = matching;
    },
    hang: (on) => {
      hanging = on;
    },
    hold: (matching, passing = 0) => {
      holdMatching = matching;
      holdPassing = passing;
      return {
        release: () => {
          holdMatching = '';
          const waiting = held;
          held = [];
          for (const forward of waiting) forward();
        },
      };
    },
    holdAnswer: (matching) => {
      const state: NonNullable<typeof answerHeld> = { answered: false, deliver: undefined, released: false };
      answerMatching = matching;
      answerHeld = state;
      return {
        answered: () => state.answered,
        release: () => {
          state.released = true;
          state.deliver?.();
        },
      };
    },
    close: () => running.close(),
  };
}
