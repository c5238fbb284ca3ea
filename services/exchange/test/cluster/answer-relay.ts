import { connect, createServer, type Socket } from 'node:net';

/**
 * A relay on the nodes' network, owned by the test: a TCP proxy in front of an owner's internal
 * listener that passes everything through, except that in the owner's HTTP/2 DATA frames it replaces
 * every answer telling an accepted order (`"kind":"outcome"` with `"ok":true`) by the answer of a
 * refused one, `INSUFFICIENT_FUNDS`, keeping the line's number and (when there is one) its
 * signature. The forged line has the original's length (padded with JSON whitespace), so frame
 * lengths and flow control stay as the owner sent them; only an answer that is checked can tell.
 */
export interface AnswerRelay {
  readonly port: number;
  /** Answers rewritten so far. */
  readonly rewritten: number;
  /** Whether answers are rewritten (true) or passed as they are. */
  forging: boolean;
  close(): Promise<void>;
}

const FORGED = JSON.stringify({
  kind: 'outcome',
  consumed: true,
  outcome: { ok: false, code: 'INSUFFICIENT_FUNDS', message: 'insufficient funds' },
});

/** `line` with an accepted order's outcome replaced by the forged refusal, or undefined to keep it. */
function forge(line: string): string | undefined {
  // With or without a signature field (a node before signed answers wrote `<number> 200 <body>`).
  const match = /^(\d+ 200 (?:[0-9a-f]{64} )?)(\{.*\})$/.exec(line);
  if (!match) return undefined;
  const [, prefix, body] = match as unknown as [string, string, string];
  if (!body.includes('"kind":"outcome"') || !body.includes('"ok":true') || body.length < FORGED.length) {
    return undefined;
  }
  return `${prefix}${FORGED}${' '.repeat(body.length - FORGED.length)}`;
}

export async function startAnswerRelay(targetPort: number): Promise<AnswerRelay> {
  const open = new Set<Socket>();
  let rewritten = 0;
  const relay = {
    port: 0,
    forging: true,
    get rewritten() {
      return rewritten;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((client) => {
    const owner = connect(targetPort, '127.0.0.1');
    for (const socket of [client, owner]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        owner.destroy();
      });
    }
    client.pipe(owner);
    // The owner's side is HTTP/2 frames from its first byte (the client's preface goes the other way).
    let pending = Buffer.alloc(0);
    owner.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        const frame = Buffer.from(pending.subarray(0, 9 + length));
        pending = pending.subarray(9 + length);
        const type = frame[3];
        const padded = (frame[4]! & 0x8) !== 0;
        if (relay.forging && type === 0 && !padded) {
          const text = frame.subarray(9).toString('latin1');
          const lines = text.split('\n').map((line) => {
            const forged = forge(line);
            if (forged === undefined) return line;
            rewritten += 1;
            return forged;
          });
          Buffer.from(lines.join('\n'), 'latin1').copy(frame, 9);
        }
        client.write(frame);
      }
    });
    owner.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no TCP address');
  relay.port = address.port;
  return relay;
}
