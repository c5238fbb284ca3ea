/**
 * One serialised frame: a Buffer when it goes to many connections (encoded once, not once per
 * connection), a string otherwise.
 */
export type OutgoingFrame = string | Buffer;

/** What the hub needs of one connection: where to deliver a serialised frame. */
export interface Peer {
  /** Sends one JSON text frame, or drops the connection when it cannot keep up. */
  deliver(frame: OutgoingFrame): void;
  /** Closes the connection with a WebSocket close code (errors.ts CLOSE) and a reason. */
  close(code: number, reason: string): void;
}
