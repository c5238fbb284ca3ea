import type { FeedClient, Frame } from './ws-client.js';

/** The channels whose frames carry the command log's sequence numbers, and can be resumed. */
export const PUBLIC = ['trades', 'book', 'book_l3'] as const;
export const PRIVATE = ['orders', 'balances', 'fills'] as const;
export type Sequenced = (typeof PUBLIC)[number] | (typeof PRIVATE)[number];
export const SEQUENCED: readonly Sequenced[] = [...PUBLIC, ...PRIVATE];

/** The frames of committed batches a client got on a channel (not answers, not snapshots). */
export const batchFrames = (client: FeedClient, channel: Sequenced) =>
  client.frames.filter(
    (f) => f.channel === channel && f.event !== 'subscribed' && f.event !== 'snapshot' && 'seq' in f,
  );

/** Where a subscription starts: a `subscribed` answer's `seq`, or its `seqs` entry of `market`. */
export const startOf = (answer: Frame, market: string) =>
  Number(answer.seq ?? (answer.seqs as Record<string, number>)[market]);

/**
 * Subscribes an authenticated client to every sequenced channel of `market`, resuming each from its
 * number in `resume` when given (`from_seq`, or `from_seqs` for a private channel); the answers.
 */
export async function subscribeSequenced(
  client: FeedClient,
  market: string,
  resume?: ReadonlyMap<Sequenced, number>,
): Promise<Map<Sequenced, Frame>> {
  const answers = new Map<Sequenced, Frame>();
  let id = 10;
  for (const channel of SEQUENCED) {
    const after = resume?.get(channel);
    const extra =
      after === undefined
        ? {}
        : (PUBLIC as readonly string[]).includes(channel)
          ? { from_seq: after }
          : { from_seqs: { [market]: after } };
    const answer = await client.request({ op: 'subscribe', id: id++, channel, market, ...extra });
    if (answer.event !== 'subscribed') throw new Error(`subscribe refused: ${JSON.stringify(answer)}`);
    answers.set(channel, answer);
  }
  return answers;
}

/** The last `seq` a client knows of a channel: its last batch frame's, else where it started. */
export function lastSeqOf(client: FeedClient, channel: Sequenced, answer: Frame, market: string): number {
  return Math.max(startOf(answer, market), ...batchFrames(client, channel).map((f) => Number(f.seq)));
}
