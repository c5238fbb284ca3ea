import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_REFERENCE_FILE } from '../../src/config.js';
import { tradingMarkets } from '../../src/orders/markets.js';
import { buildReferenceData, loadReferenceData, ReferenceDataError } from '../../src/reference/load.js';

const document = () => parse(readFileSync(DEFAULT_REFERENCE_FILE, 'utf8')) as Record<string, unknown[]>;

describe('reference data', () => {
  it('ships the default currencies and markets', () => {
    const data = loadReferenceData(DEFAULT_REFERENCE_FILE);
    expect(data.currencies.map((c) => c.code)).toEqual([
      'btc',
      'eth',
      'usdt',
      'xrp',
      'ltc',
      'uah',
      'usd',
      'eur',
      'rub',
    ]);
    expect(data.currency('XRP')?.has_memo).toBe(true);
    for (const id of ['btcuah', 'ethuah', 'btcusdt', 'ethbtc', 'usdtuah', 'xrpuah', 'ltcusdt'])
      expect(data.market(id)).toBeDefined();
    const btc = data.rates.find((r) => r.currency === 'btc');
    expect(btc).toMatchObject({ btc: 1, usd: 37250.5 });
  });

  it('refuses a market naming an unknown currency, naming the problem', () => {
    const doc = document();
    doc.markets!.push({
      id: 'dogeuah',
      base_unit: 'doge',
      quote_unit: 'uah',
      base_precision: 0,
      quote_precision: 0,
      display_precision: 0,
    });
    expect(() => buildReferenceData(doc, 'test.yaml')).toThrow(
      /market dogeuah names unknown currency "doge"/,
    );
  });

  it('refuses wrong types, duplicates and unknown fields', () => {
    const wrongType = document();
    (wrongType.currencies![0] as Record<string, unknown>).precision = { real: 'eight', trade: 6 };
    expect(() => buildReferenceData(wrongType)).toThrow(ReferenceDataError);
    const duplicate = document();
    duplicate.currencies!.push(duplicate.currencies![0]);
    expect(() => buildReferenceData(duplicate)).toThrow(/duplicate currency code "btc"/);
    const extra = document();
    (extra.markets![0] as Record<string, unknown>).colour = 'red';
    expect(() => buildReferenceData(extra)).toThrow(ReferenceDataError);
  });

  it('keeps the ledger precision private and requires it to settle every market exactly', () => {
    const data = loadReferenceData(DEFAULT_REFERENCE_FILE);
    expect(data.currency('btc')).not.toHaveProperty('ledger_precision');
    expect(data.ledgerPrecision('btc')).toBe(10);
    const doc = document();
    const btc = doc.currencies!.find((c) => (c as { code: string }).code === 'btc') as Record<
      string,
      unknown
    >;
    btc.ledger_precision = 9;
    expect(() => buildReferenceData(doc)).toThrow(/btc needs ledger_precision >= 10 for market ethbtc/);
  });

  it('reports a missing or broken file by name', () => {
    expect(() => loadReferenceData('/nonexistent/reference.yaml')).toThrow(/reference\.yaml: cannot read/);
  });
});

describe('per-market fees', () => {
  it('take the market entry when it sets them, the service default otherwise', () => {
    const doc = document();
    const markets = doc.markets as Record<string, unknown>[];
    const btcuah = markets.find((m) => m.id === 'btcuah')!;
    btcuah.maker_fee_ppm = 0;
    btcuah.taker_fee_ppm = 1500;
    const ethuah = markets.find((m) => m.id === 'ethuah')!;
    delete ethuah.maker_fee_ppm;
    delete ethuah.taker_fee_ppm;
    const data = buildReferenceData(doc, 'test.yaml');
    const defaults = { makerFeePpm: 700, takerFeePpm: 900 };
    const all = tradingMarkets(data, defaults);
    expect(all.get('btcuah')?.spec).toMatchObject({ makerFeePpm: 0, takerFeePpm: 1500 });
    expect(all.get('ethuah')?.spec).toMatchObject({ makerFeePpm: 700, takerFeePpm: 900 });
  });

  it('refuses a fee above 100 %', () => {
    const doc = document();
    (doc.markets as Record<string, unknown>[])[0]!.taker_fee_ppm = 1_000_001;
    expect(() => buildReferenceData(doc, 'test.yaml')).toThrow(/taker_fee_ppm/);
  });
});
