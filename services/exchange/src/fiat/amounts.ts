import type { Currency, ReferenceData } from '../reference/load.js';

/**
 * Conversions between ledger minor units (`ledger_precision` decimals) and the gateway's units
 * (`precision.real` decimals, 2 for UAH/USD/RUB). Fiat amounts accepted by the API have at most
 * `precision.real` decimals, so the conversion to gateway units is exact.
 */
export function ledgerToReal(reference: ReferenceData, currency: Currency, ledger: bigint): bigint {
  const shift = reference.ledgerPrecision(currency.code) - currency.precision.real;
  return ledger / 10n ** BigInt(shift);
}

export function realToLedger(reference: ReferenceData, currency: Currency, real: bigint): bigint {
  const shift = reference.ledgerPrecision(currency.code) - currency.precision.real;
  return real * 10n ** BigInt(shift);
}

/** Gateway text of real minor units with exactly the currency's decimals: 50000n -> "500.00". */
export function gatewayText(currency: Currency, real: bigint): string {
  const decimals = currency.precision.real;
  const digits = real.toString().padStart(decimals + 1, '0');
  return decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}
