import { signInvoiceForm } from '../domain/invoice-form.js';

/**
 * Creates an invoice for the bundled `exchange` merchant and prints the hosted page's address, to
 * open in a browser: `npm run -s try-invoice -w services/paygate -- 500 UAH`.
 * The gateway address comes from PAYGATE_URL (default http://127.0.0.1:3200); the form is signed, as
 * the merchant would, with PAYGATE_MERCHANT_SECRET_EXCHANGE (default the sandbox secret).
 */
const [amount = '500', currency = 'UAH'] = process.argv.slice(2);
const base = (process.env.PAYGATE_URL || 'http://127.0.0.1:3200').replace(/\/+$/, '');
const secret = process.env.PAYGATE_MERCHANT_SECRET_EXCHANGE || 'sandbox-exchange-secret';
const code = currency.toUpperCase();
const form = {
  publicKey: `pk_test_exchange_${code.toLowerCase()}`,
  referenceId: `try-${Date.now()}`,
  currency: code,
  amount,
  service: `payment_card_${code.toLowerCase()}_hpp`,
  expires: Math.floor(Date.now() / 1000) + 600,
};
const response = await fetch(`${base}/public-api/payment-invoices`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    public_key: form.publicKey,
    reference_id: form.referenceId,
    description: 'Try-it invoice',
    service: form.service,
    currency: code,
    amount,
    expires: form.expires,
    signature: signInvoiceForm(secret, form),
  }),
});
const answer = (await response.json()) as {
  data?: {
    id: string;
    total: string;
    currency: string;
    active_payment: { payload: { name: string; value: string }[] };
  };
  error?: { message: string };
};
if (!answer.data) {
  console.error(`paygate: ${answer.error?.message ?? `HTTP ${response.status}`}`);
  process.exit(1);
}
const fields = new URLSearchParams(
  answer.data.active_payment.payload.map((p): [string, string] => [p.name, p.value]),
);
console.log(`invoice ${answer.data.id}: ${answer.data.total} ${answer.data.currency} to pay`);
console.log(`${base}/public-api/payment-invoices/page?${fields}`);
