import { FeedClient, type Frame } from './ws-client.js';

/** An order operation's answer: `result` (the REST route's body) or `error` (its code and name). */
export type OperationAnswer =
  | { readonly id: number | string; readonly result: unknown; readonly error?: undefined }
  | {
      readonly id: number | string;
      readonly result?: undefined;
      readonly error: { readonly code: number; readonly name: string; readonly message: string };
    };

/**
 * A trading client over the feed's WebSocket, written from docs/feed.md: signs `auth` like a v3
 * request, then sends order operations with increasing ids and matches each answer by its id.
 */
export class OrderSocket {
  private nextId = 1;
  private constructor(readonly feed: FeedClient) {}

  static async open(url: string, apiKey: string, secret: string): Promise<OrderSocket> {
    const feed = await FeedClient.open(url);
    await feed.authenticate(apiKey, secret);
    return new OrderSocket(feed);
  }

  /** Sends `{"op": name, "id", "params"}` and resolves with its answer (30 s deadline). */
  async op(name: string, params: Record<string, unknown>): Promise<OperationAnswer> {
    const id = this.nextId++;
    const from = this.feed.frames.length;
    this.feed.send({ op: name, id, params });
    const frame: Frame = await this.feed.next(
      (f) => f.id === id && ('result' in f || 'error' in f),
      from,
      30_000,
    );
    return frame as unknown as OperationAnswer;
  }

  /** `order.submit` of `params`; its order, or an error naming the refusal. */
  async submit(params: Record<string, unknown>): Promise<(string | number | null)[]> {
    const answer = await this.op('order.submit', params);
    if (answer.error) throw new Error(`order refused: ${JSON.stringify(answer.error)}`);
    return answer.result as (string | number | null)[];
  }

  close(): void {
    this.feed.close();
  }
}
