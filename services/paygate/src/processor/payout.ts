import { randomBytes } from 'node:crypto';
import { maskCardNumber } from '../domain/card.js';
import { TEST_CARDS } from './card.js';

/**
 * The sandbox payout processor: accepts a destination, answers a token and the masked destination
 * at once, and settles later (the gateway's worker reveals the outcome at `settleAt`). The card
 * `4000 0000 0000 0119` is accepted and then fails with `processor_error`; anything else succeeds.
 */
export interface PayoutSubmission {
  readonly token: string;
  readonly masked: string;
  readonly outcome: 'success' | 'failed';
  readonly reason: string | null;
}

export interface PayoutProcessor {
  submit(
    destination: { kind: 'card'; number: string } | { kind: 'account'; value: string },
  ): PayoutSubmission;
}

/** Wallet ids and e-mails are shown with their middle hidden: `P1****00`, `a***@example.com`. */
export function maskAccount(value: string): string {
  const at = value.indexOf('@');
  if (at > 0) return `${value.slice(0, 1)}***${value.slice(at)}`;
  if (value.length <= 4) return '*'.repeat(value.length);
  return `${value.slice(0, 2)}${'*'.repeat(value.length - 4)}${value.slice(-2)}`;
}

export function sandboxPayoutProcessor(): PayoutProcessor {
  return {
    submit(destination) {
      const token = `ptok_${randomBytes(12).toString('hex')}`;
      if (destination.kind === 'card') {
        const fails = destination.number === TEST_CARDS.payoutFails;
        return {
          token,
          masked: maskCardNumber(destination.number),
          outcome: fails ? 'failed' : 'success',
          reason: fails ? 'processor_error' : null,
        };
      }
      return { token, masked: maskAccount(destination.value), outcome: 'success', reason: null };
    },
  };
}
