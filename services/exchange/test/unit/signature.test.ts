import { describe, expect, it } from 'vitest';
import { checkNonce, signatureMatches, signV2, signV3, v2Canonical } from '../../src/auth/signature.js';

describe('request signatures', () => {
  it('matches the v2 test vector of the reference page', () => {
    const params = { access_key: 'dV6vEJe1CO', market: 'btcuah', tonce: '1465850766246' };
    expect(v2Canonical({ ...params, signature: 'ignored' })).toBe(
      'access_key=dV6vEJe1CO&market=btcuah&tonce=1465850766246',
    );
    expect(signV2('AYifzxC3Xo', 'GET', '/api/v2/trades/my', params)).toBe(
      '33a694498a2a70cb4ca9a7e28224321e20b41f10217604e9de80ff4ee8cf310e',
    );
  });

  it('signs v3 over path, nonce and the raw body, or {} without a body', () => {
    // openssl: printf '/v3/auth/me1700000000000{}' | openssl dgst -sha384 -hmac secret
    const expected =
      'a7186b8df9d33cbf92c690357190f6efeb04941a6f2193df3ccd505e12267f63ea6fd10727d34ca55191321229435192';
    expect(signV3('secret', '/v3/auth/me', '1700000000000')).toBe(expected);
    expect(signV3('secret', '/v3/auth/me', '1700000000000')).toBe(
      signV3('secret', '/v3/auth/me', '1700000000000', '{}'),
    );
    expect(signV3('secret', '/v3/auth/me', '1700000000000', '{"a":1}')).not.toBe(
      signV3('secret', '/v3/auth/me', '1700000000000', '{"a": 1}'),
    );
  });

  it('compares signatures in constant time, lower-case hex only, refusing junk', () => {
    const signature = signV3('s', '/p', '1', '{}');
    // lower-case hex only: an upper-case copy of a valid signature is refused (issue 28)
    expect(signatureMatches(signature, signature.toUpperCase())).toBe(false);
    expect(signatureMatches(signature, signature.slice(0, -1))).toBe(false);
    expect(signatureMatches(signature, `${signature.slice(0, -1)}z`)).toBe(false);
    expect(signatureMatches(signature, '')).toBe(false);
  });

  it('accepts nonces within the window of server time only', () => {
    expect(checkNonce('1000000', 1_000_000, 5)).toBe('ok');
    expect(checkNonce('1000006', 1_000_000, 5)).toBe('out_of_window');
    expect(checkNonce('999994', 1_000_000, 5)).toBe('out_of_window');
    expect(checkNonce('12a', 1_000_000, 5)).toBe('malformed');
    expect(checkNonce('-5', 1_000_000, 5)).toBe('malformed');
  });
});
