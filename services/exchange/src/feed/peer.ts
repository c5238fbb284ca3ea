/**
 * One serialised frame: a Buffer when it goes to many connections (encoded once, not once per
 * connection), a string otherwise.
 */
export type OutgoingFrame = string | Buffer;

/** What the hub needs of one connection: where to deliver a serialised frame. */
export interface Peer {
  /** Sends one JSON text frame, or drops the connection when it cannot keep up. */
  deliver(frame: OutgoingFrame): void;
  /**
   * Sends WebSocket frames already framed (ws-frame.ts), in order, with one write to the socket;
   * or drops the connection when it cannot keep up. Without it the frames' payloads go to `deliver`.
   */
  deliverFramed?(frames: readonly Buffer[], payloads: readonly Buffer[]): void;
  /**
   * Sends a resume's frames (payloads, taken one at a time as the connection drains: send-queue.ts)
   * before anything queued later. Without it they go through `deliver`.
   */
  replay?(payloads: Iterable<Buffer>): void;
  /** Closes the connection with a WebSocket close code (errors.ts CLOSE) and a reason. */
  close(code: number, reason: string): void;
}
