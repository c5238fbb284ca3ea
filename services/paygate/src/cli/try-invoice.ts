import { createTryInvoice } from '../try-it/invoice.js';

/**
 * Creates an invoice for the bundled `try_it` merchant and prints the hosted page's address, to
 * open in a browser: `npm run -s try-invoice -w services/paygate -- 500 UAH [uk|ru|en]`.
 * The try-it merchant's callbacks are acknowledged by the gateway itself and never reach the
 * exchange, which does not know the reference. The gateway address comes from PAYGATE_URL (default
 * http://127.0.0.1:3200); the form is signed with PAYGATE_MERCHANT_SECRET_TRY_IT (default the sandbox secret).
 */
const [amount = '500', currency = 'UAH', locale] = process.argv.slice(2);
try {
  const invoice = await createTryInvoice({
    gatewayUrl: process.env.PAYGATE_URL || 'http://127.0.0.1:3200',
    secret: process.env.PAYGATE_MERCHANT_SECRET_TRY_IT || 'sandbox-try-it-secret',
    amount,
    currency,
    locale,
  });
  console.log(`invoice ${invoice.id}: ${invoice.total} ${invoice.currency} to pay`);
  console.log(invoice.pageUrl);
} catch (error) {
  console.error(`paygate: ${(error as Error).message}`);
  process.exit(1);
}
