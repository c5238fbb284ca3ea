import { describe, expect, it } from 'vitest';
import { feeItems } from '../../src/fiat/live-fees.js';
import { eventually, useFiatPlatform } from './platform.js';

const platform = useFiatPlatform();

describe('/v3/fees shows the fiat fees the gateway charges', () => {
  it('reads them from the gateway prerequests (its config/gateway.yaml), not the reference file', async () => {
    const fees = await eventually(async () => {
      const answer = await platform.exchange.inject({ method: 'GET', url: '/v3/fees' });
      const entries = answer.json() as {
        code: string;
        category: string;
        deposit_fees: unknown;
        withdraw_fees: unknown;
      }[];
      const card = entries.find((e) => e.code === 'payment_card' && e.category === 'uah');
      // The reference file says 1.0 % for card deposits in UAH; the gateway charges 1.5 %.
      return card && JSON.stringify(card.deposit_fees) !== '[{"type":"percent","amount":"1.0"}]'
        ? entries
        : undefined;
    });
    expect(fees.find((e) => e.code === 'payment_card' && e.category === 'uah')).toEqual({
      code: 'payment_card',
      category: 'uah',
      deposit_fees: [{ type: 'percent', amount: '1.5' }],
      withdraw_fees: [{ type: 'percent', amount: '1.5' }],
    });
    expect(fees.find((e) => e.code === 'payment_card' && e.category === 'usd')).toEqual({
      code: 'payment_card',
      category: 'usd',
      deposit_fees: [
        { type: 'percent', amount: '2.5' },
        { type: 'fixed', amount: '0.3' },
        { type: 'min', amount: '1' },
      ],
      withdraw_fees: [
        { type: 'percent', amount: '2' },
        { type: 'fixed', amount: '1' },
        { type: 'min', amount: '2' },
        { type: 'max', amount: '100' },
      ],
    });
    // Coin entries and fiat entries the gateway does not know stay as the reference file has them.
    expect(fees.some((e) => e.category === 'coin')).toBe(true);
    expect(fees.some((e) => e.code === 'svc_code')).toBe(true);
  });

  it('renders a fee rule as items', () => {
    expect(feeItems({ rate: 1, fixed: 0, min: '0.50', max: 50 })).toEqual([
      { type: 'percent', amount: '1' },
      { type: 'min', amount: '0.50' },
      { type: 'max', amount: '50' },
    ]);
  });
});
