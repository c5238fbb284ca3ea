/**
 * What a subscription receives for a logged change (pure). A subscription sees what its owner may
 * see (PUBLIC events, the owner's own, every event for a member), so a change's type is read from
 * the subscriber's side: an event it could not see before and can now is `event.created`, one it
 * could see and still can is `event.updated`, one it no longer can (deleted, or made PRIVATE by its
 * creator) is `event.deleted`; a change it sees on neither side sends nothing. The payload is the
 * Standard Webhooks shape `{type, timestamp, data}`, the same bytes on every retry.
 */
import { createHmac } from 'node:crypto';
import { type Access, toView } from '../domain/event.js';

export const EVENT_TYPES = ['event.created', 'event.updated', 'event.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** Sent by `POST /webhooks/{id}/test` to that subscription only, whatever its types. */
export const TEST_TYPE = 'webhook.test';
export type MessageType = EventType | typeof TEST_TYPE;

export interface EventState {
  access: Access;
  createdBy: string;
}

/** The event's fields after the change, kept in the log while a subscription was active. */
export interface EventSnapshot {
  name: string;
  body: string;
  cover: string | null;
  date: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface LoggedChange {
  seq: bigint;
  kind: 'event' | 'test';
  /** The event's id (kind `event`). */
  eventId: string | null;
  /** The subscription a test message is for (kind `test`). */
  target: string | null;
  /** `webhook-id`: the same on every attempt of this message. */
  messageId: string;
  changedAt: Date;
  /** Null when the event did not exist before (created) or after (deleted). */
  before: EventState | null;
  after: EventState | null;
  snapshot: EventSnapshot | null;
}

export interface Subscriber {
  id: string;
  owner: string;
  member: boolean;
  /** Types asked for; all three when the subscription named none. */
  types: readonly EventType[];
}

function sees(subscriber: Subscriber, state: EventState | null): boolean {
  if (state === null) return false;
  return state.access === 'PUBLIC' || subscriber.member || state.createdBy === subscriber.owner;
}

/** The type `subscriber` receives for `change`, or null when it receives nothing. */
export function messageTypeFor(change: LoggedChange, subscriber: Subscriber): MessageType | null {
  if (change.kind === 'test') return change.target === subscriber.id ? TEST_TYPE : null;
  const before = sees(subscriber, change.before);
  const after = sees(subscriber, change.after);
  const type: EventType | null =
    !before && after ? 'event.created' : before && after ? 'event.updated' : before ? 'event.deleted' : null;
  return type !== null && subscriber.types.includes(type) ? type : null;
}

/** The JSON body of the message: the event as `GET /events/{id}` answers it, or only its id when deleted. */
export function payloadOf(change: LoggedChange, type: MessageType): string {
  const timestamp = change.changedAt.toISOString();
  if (type === TEST_TYPE) {
    return JSON.stringify({ type, timestamp, data: { subscription_id: change.target } });
  }
  const eventId = change.eventId ?? '';
  if (type === 'event.deleted' || change.snapshot === null || change.after === null) {
    return JSON.stringify({ type, timestamp, data: { eventId } });
  }
  const snapshot = change.snapshot;
  const view = toView({
    eventId,
    ...snapshot,
    access: change.after.access,
    createdBy: change.after.createdBy,
    revision: '',
  });
  return JSON.stringify({ type, timestamp, data: view });
}

/** A fresh `whsec_` secret: 32 random bytes (Standard Webhooks: 24-64), base64. */
export function secretFrom(bytes: Buffer): string {
  return `whsec_${bytes.toString('base64')}`;
}

/** The HMAC keys of `whsec_` secrets (the base64 after the prefix), decoded once per batch. */
export function signingKeys(secrets: readonly string[]): Buffer[] {
  return secrets.map((secret) =>
    Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64'),
  );
}

/**
 * `webhook-signature`: `v1,<base64 HMAC-SHA256>` of `id.timestamp.body` for each key (the current
 * secret first; during a rotation's grace the previous one too), space-separated.
 */
export function signWith(
  keys: readonly Buffer[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  const content = `${messageId}.${timestampSeconds}.${body}`;
  return keys.map((key) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`).join(' ');
}

/** `signWith` from the secrets themselves. */
export function signatureHeader(
  secrets: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  return signWith(signingKeys(secrets), messageId, timestampSeconds, body);
}
