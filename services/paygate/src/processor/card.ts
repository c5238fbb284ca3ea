import { randomBytes } from 'node:crypto';
import { maskCardNumber } from '../domain/card.js';

/**
 * The sandbox card processor (gateway-contract.md "Sandbox processor test cards"). It decides by
 * card number and keeps nothing: the gateway stores only the masked number and the token it returns.
 *
 * | card                  | outcome                                             |
 * |-----------------------|-----------------------------------------------------|
 * | 4242 4242 4242 4242   | approved                                            |
 * | 4000 0000 0000 0002   | declined                                            |
 * | 4000 0000 0000 9995   | insufficient funds                                  |
 * | 4000 0000 0000 3220   | 3-D Secure step; code 123456 approves, others fail  |
 * | any other valid card  | approved                                            |
 */
export const TEST_CARDS = {
  success: '4242424242424242',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  threeDSecure: '4000000000003220',
  payoutFails: '4000000000000119',
} as const;

/** The code that passes the sandbox 3-D Secure step. */
export const SANDBOX_3DS_CODE = '123456';

export type ChargeResult = 'approved' | 'declined' | 'insufficient_funds' | 'challenge';

export interface Charge {
  readonly result: ChargeResult;
  readonly token: string;
  readonly masked: string;
}

export interface CardProcessor {
  /** Authorises a payment with a card already checked (Luhn, expiry, CVC). */
  charge(card: { number: string }): Charge;
  /** Completes a pending 3-D Secure step of a charge. */
  confirmChallenge(token: string, code: string): 'approved' | 'declined';
}

export function sandboxCardProcessor(): CardProcessor {
  return {
    charge(card) {
      const token = `tok_${randomBytes(12).toString('hex')}`;
      const masked = maskCardNumber(card.number);
      switch (card.number) {
        case TEST_CARDS.declined:
          return { result: 'declined', token, masked };
        case TEST_CARDS.insufficientFunds:
          return { result: 'insufficient_funds', token, masked };
        case TEST_CARDS.threeDSecure:
          return { result: 'challenge', token, masked };
        default:
          return { result: 'approved', token, masked };
      }
    },
    confirmChallenge(_token, code) {
      return code.trim() === SANDBOX_3DS_CODE ? 'approved' : 'declined';
    },
  };
}
