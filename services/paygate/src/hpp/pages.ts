import type { CardFormErrors } from '../domain/card-form.js';
import { SANDBOX_3DS_CODE } from '../processor/card.js';
import type { Invoice } from '../store/invoices.js';
import { type Html, html } from './html.js';
import { layout } from './layout.js';
import { CARD_FORM_SCRIPT } from './script.js';

/** What every page of one invoice shows. */
export interface PageContext {
  readonly invoice: Invoice;
  readonly merchantName: string;
  readonly methodName: string;
  readonly token: string;
  readonly nonce: string;
}

const BASE = '/public-api/payment-invoices';

function money(amount: string, currency: string): string {
  return `${amount} ${currency}`;
}

function summary(ctx: PageContext): Html {
  const { invoice } = ctx;
  return html`<dl class="summary">
<dt>Merchant</dt><dd>${ctx.merchantName}</dd>
${invoice.description ? html`<dt>Description</dt><dd>${invoice.description}</dd>` : ''}
<dt>Amount</dt><dd>${money(invoice.amount, invoice.currency)}</dd>
<dt>Fee</dt><dd>${money(invoice.fee, invoice.currency)}</dd>
<dt class="total">Total to pay</dt><dd class="total">${money(invoice.total, invoice.currency)}</dd>
</dl>`;
}

function hidden(ctx: PageContext): Html {
  return html`<input type="hidden" name="invoice_id" value="${ctx.invoice.id}">
<input type="hidden" name="token" value="${ctx.token}">`;
}

function heading(ctx: PageContext, text: string): Html {
  return html`<h1>${text}${ctx.invoice.testMode ? html`<span class="badge">Test mode</span>` : ''}</h1>`;
}

function cancelForm(ctx: PageContext): Html {
  return html`<form method="post" action="${BASE}/cancel">
${hidden(ctx)}
<button type="submit" class="secondary">Cancel and return to ${ctx.merchantName}</button>
</form>`;
}

const FIELD_LABELS: Record<keyof CardFormErrors, string> = {
  card_number: 'Card number',
  expiry: 'Expiry date',
  cvc: 'Security code',
};

function errorSummary(errors: CardFormErrors): Html | '' {
  const entries = Object.entries(errors) as [keyof CardFormErrors, string][];
  if (entries.length === 0) return '';
  return html`<div class="summary-box" role="alert" tabindex="-1" id="error-summary">
<h2>Please correct the following</h2>
<ul>${entries.map(([key, message]) => html`<li><a href="#${key}">${FIELD_LABELS[key]}: ${message}</a></li>`)}</ul>
</div>`;
}

function textField(options: {
  id: keyof CardFormErrors;
  label: string;
  hint: string;
  autocomplete: string;
  inputmode: string;
  maxlength: number;
  value?: string;
  error?: string;
}): Html {
  const describedBy = `${options.id}-hint${options.error ? ` ${options.id}-error` : ''}`;
  return html`<div class="field">
<label for="${options.id}">${options.label}</label>
<span class="hint" id="${options.id}-hint">${options.hint}</span>
<input type="text" id="${options.id}" name="${options.id}" autocomplete="${options.autocomplete}" inputmode="${options.inputmode}" maxlength="${options.maxlength}" spellcheck="false" aria-describedby="${describedBy}"${options.error ? html` aria-invalid="true"` : ''} value="${options.value ?? ''}">
<span class="error" id="${options.id}-error"${options.error ? '' : html` hidden`}>${options.error ?? ''}</span>
</div>`;
}

function testCards(ctx: PageContext): Html | '' {
  if (!ctx.invoice.testMode) return '';
  return html`<div class="note">
<strong>Test mode:</strong> no real money moves. Test cards (any future expiry, any 3-digit code):
<ul>
<li><code>4242 4242 4242 4242</code> succeeds</li>
<li><code>4000 0000 0000 3220</code> asks for a confirmation code</li>
<li><code>4000 0000 0000 0002</code> is declined</li>
<li><code>4000 0000 0000 9995</code> has insufficient funds</li>
</ul>
</div>`;
}

/**
 * The card entry page. The card number and security code are never written back into the page,
 * even after an error: the payer types them again.
 */
export function cardPage(ctx: PageContext, state: { errors?: CardFormErrors; expiry?: string } = {}): string {
  const errors = state.errors ?? {};
  const body = html`${heading(ctx, `Pay ${ctx.merchantName}`)}
${errorSummary(errors)}
${summary(ctx)}
<h2>Pay by ${ctx.methodName}</h2>
<form method="post" action="${BASE}/pay" id="card-form" novalidate>
${hidden(ctx)}
${textField({ id: 'card_number', label: 'Card number', hint: '12 to 19 digits, as printed on the card', autocomplete: 'cc-number', inputmode: 'numeric', maxlength: 23, ...(errors.card_number ? { error: errors.card_number } : {}) })}
<div class="row">
${textField({ id: 'expiry', label: 'Expiry date', hint: 'MM/YY', autocomplete: 'cc-exp', inputmode: 'numeric', maxlength: 7, value: state.expiry ?? '', ...(errors.expiry ? { error: errors.expiry } : {}) })}
${textField({ id: 'cvc', label: 'Security code', hint: '3 digits on the back', autocomplete: 'cc-csc', inputmode: 'numeric', maxlength: 4, ...(errors.cvc ? { error: errors.cvc } : {}) })}
</div>
<button type="submit">Pay ${money(ctx.invoice.total, ctx.invoice.currency)}</button>
</form>
<div class="actions">${cancelForm(ctx)}</div>
${testCards(ctx)}`;
  return layout({
    title: `Pay ${money(ctx.invoice.total, ctx.invoice.currency)} - ${ctx.merchantName}`,
    nonce: ctx.nonce,
    body,
    script: CARD_FORM_SCRIPT,
  });
}

/** The sandbox page of e-wallet methods: the payer approves or declines in the "wallet". */
export function walletPage(ctx: PageContext): string {
  const body = html`${heading(ctx, `Pay ${ctx.merchantName}`)}
${summary(ctx)}
<h2>Pay with ${ctx.methodName}</h2>
<p>This sandbox stands in for the ${ctx.methodName} site: approve or decline the payment.</p>
<div class="actions">
<form method="post" action="${BASE}/wallet">
${hidden(ctx)}
<input type="hidden" name="decision" value="approve">
<button type="submit">Approve ${money(ctx.invoice.total, ctx.invoice.currency)}</button>
</form>
<form method="post" action="${BASE}/wallet">
${hidden(ctx)}
<input type="hidden" name="decision" value="decline">
<button type="submit" class="danger">Decline</button>
</form>
${cancelForm(ctx)}
</div>`;
  return layout({ title: `Pay with ${ctx.methodName} - ${ctx.merchantName}`, nonce: ctx.nonce, body });
}

/** The 3-D Secure-style step: the card issuer asks for a one-time code. */
export function challengePage(ctx: PageContext, error?: string): string {
  const body = html`${heading(ctx, 'Confirm your payment')}
<p>Your card issuer asks you to confirm this payment of <strong>${money(ctx.invoice.total, ctx.invoice.currency)}</strong>
to ${ctx.merchantName} with card <strong>${ctx.invoice.cardMasked ?? ''}</strong>.</p>
${error ? html`<div class="summary-box" role="alert"><h2>${error}</h2></div>` : ''}
<form method="post" action="${BASE}/confirm">
${hidden(ctx)}
<div class="field">
<label for="code">Confirmation code</label>
<span class="hint" id="code-hint">${ctx.invoice.testMode ? html`Test mode: the code is <code>${SANDBOX_3DS_CODE}</code>; any other code fails.` : 'Enter the code your bank sent you.'}</span>
<input type="text" id="code" name="code" autocomplete="one-time-code" inputmode="numeric" maxlength="8" aria-describedby="code-hint" autofocus>
</div>
<button type="submit">Confirm payment</button>
</form>`;
  return layout({ title: `Confirm your payment - ${ctx.merchantName}`, nonce: ctx.nonce, body });
}

const FAILURES: Record<string, string> = {
  declined: 'Your card was declined. No money was taken.',
  insufficient_funds: 'The card has insufficient funds. No money was taken.',
  authentication_failed: 'The confirmation code was wrong, so the payment was not made.',
  canceled_by_payer: 'You cancelled the payment. No money was taken.',
};

/** The outcome, with the way back to the merchant. */
export function resultPage(ctx: PageContext): string {
  const { invoice } = ctx;
  const ok = invoice.status === 'success';
  const title =
    invoice.status === 'success'
      ? 'Payment successful'
      : invoice.status === 'expired'
        ? 'Payment expired'
        : 'Payment failed';
  const message = ok
    ? `You paid ${money(invoice.total, invoice.currency)} to ${ctx.merchantName}.`
    : invoice.status === 'expired'
      ? 'The time to pay this invoice has run out. No money was taken.'
      : (FAILURES[invoice.failureReason ?? ''] ?? 'The payment did not go through. No money was taken.');
  const returnUrl = `${BASE}/return?invoice_id=${encodeURIComponent(invoice.id)}&token=${encodeURIComponent(ctx.token)}`;
  const body = html`${heading(ctx, title)}
<p class="status ${ok ? 'success' : 'failed'}" role="status">${message}</p>
${summary(ctx)}
${invoice.cardMasked ? html`<p>Card: <strong>${invoice.cardMasked}</strong></p>` : ''}
<p>Invoice <code>${invoice.id}</code>, reference <code>${invoice.referenceId}</code>.</p>
<div class="actions"><a href="${returnUrl}" id="return-link">Return to ${ctx.merchantName}</a></div>`;
  return layout({ title: `${title} - ${ctx.merchantName}`, nonce: ctx.nonce, body });
}

/** A link that cannot be used (unknown invoice, wrong token) or a form that cannot be read. */
export function problemPage(nonce: string, title: string, message: string): string {
  return layout({ title, nonce, body: html`<h1>${title}</h1><p>${message}</p>` });
}
