import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The hosted page's capability token, carried in the invoice's form payload and in every form of
 * the page: HMAC of the invoice id under the merchant's secret. Only the gateway and the merchant
 * can compute it, nothing is stored, and a repeated invoice creation answers the same payload.
 * It guards the page's forms against cross-site posts; replays are harmless because a finished
 * invoice never changes again.
 */
export function pageToken(merchantSecret: string, invoiceId: string): string {
  return createHmac('sha256', merchantSecret).update(`hosted-page:${invoiceId}`).digest('hex');
}

export function pageTokenValid(merchantSecret: string, invoiceId: string, token: unknown): boolean {
  if (typeof token !== 'string' || !/^[0-9a-f]{64}$/.test(token)) return false;
  return timingSafeEqual(Buffer.from(pageToken(merchantSecret, invoiceId), 'hex'), Buffer.from(token, 'hex'));
}
