import { type Html, html } from '@platform/checkout-look/html';
import { checkoutLayout } from '@platform/checkout-look/layout';
import type { PageFieldKey, PageFields } from '../catalog/catalog.js';
import { BRAND_NAMES, cardBrand } from '../domain/card-brand.js';
import type { CardFormErrors } from '../domain/card-form.js';
import { SANDBOX_3DS_CODE } from '../processor/card.js';
import type { Invoice } from '../store/invoices.js';
import { formatMoney, type Locale } from './locale.js';
import { MESSAGES, type Messages } from './messages.js';
import { CARD_FORM_SCRIPT } from './script.js';

/** What every page of one invoice shows. */
export interface PageContext {
  readonly invoice: Invoice;
  readonly merchantName: string;
  /** The method's name in the payer's language. */
  readonly methodName: string;
  readonly token: string;
  readonly nonce: string;
  readonly locale: Locale;
  readonly pageFields: PageFields;
  /** Cards the payer may still try on this invoice. */
  readonly attemptsLeft: number;
  /** The invoice's service fields with their labels in the payer's language. */
  readonly serviceFields?: readonly { readonly label: string; readonly value: string }[];
}

const BASE = '/public-api/payment-invoices';

const t = (ctx: { locale: Locale }): Messages => MESSAGES[ctx.locale];

function money(ctx: PageContext, amount: string): string {
  return formatMoney(amount, ctx.invoice.currency, ctx.locale);
}

/** A page input's label or hint in the payer's language (English when the file has none). */
function fieldText(ctx: PageContext, key: PageFieldKey, part: 'label' | 'hint'): string {
  const texts = ctx.pageFields[key][part];
  return texts[ctx.locale] ?? texts.en ?? key;
}

function totalLabel(ctx: PageContext): string {
  const { status } = ctx.invoice;
  if (status === 'success') return t(ctx).totalPaid;
  if (status === 'failed' || status === 'expired') return t(ctx).total;
  return t(ctx).totalToPay;
}

function summary(ctx: PageContext): Html {
  const { invoice } = ctx;
  const m = t(ctx);
  return html`<dl class="summary">
<dt>${m.merchant}</dt><dd>${ctx.merchantName}</dd>
${invoice.description ? html`<dt>${m.description}</dt><dd>${invoice.description}</dd>` : ''}
${(ctx.serviceFields ?? []).map((f) => html`<dt>${f.label}</dt><dd>${f.value}</dd>`)}
<dt>${m.amount}</dt><dd>${money(ctx, invoice.amount)}</dd>
<dt>${m.fee}</dt><dd>${money(ctx, invoice.fee)}</dd>
<dt class="total">${totalLabel(ctx)}</dt><dd class="total">${money(ctx, invoice.total)}</dd>
</dl>`;
}

function hidden(ctx: PageContext): Html {
  return html`<input type="hidden" name="invoice_id" value="${ctx.invoice.id}">
<input type="hidden" name="token" value="${ctx.token}">`;
}

function heading(ctx: PageContext, text: string): Html {
  return html`<h1>${text}${ctx.invoice.testMode ? html`<span class="badge">${t(ctx).testMode}</span>` : ''}</h1>`;
}

function cancelForm(ctx: PageContext): Html {
  return html`<form method="post" action="${BASE}/cancel">
${hidden(ctx)}
<button type="submit" class="secondary">${t(ctx).cancelAndReturn(ctx.merchantName)}</button>
</form>`;
}

function errorSummary(ctx: PageContext, errors: CardFormErrors): Html | '' {
  const entries = Object.entries(errors) as [keyof CardFormErrors, NonNullable<CardFormErrors['cvc']>][];
  if (entries.length === 0) return '';
  return html`<div class="summary-box" role="alert" tabindex="-1" id="error-summary">
<h2>${t(ctx).fixErrors}</h2>
<ul>${entries.map(([key, problem]) => html`<li><a href="#${key}">${fieldText(ctx, key, 'label')}: ${t(ctx).cardProblems[problem]}</a></li>`)}</ul>
</div>`;
}

/** The last card did not pay and the invoice is open for another one. */
function attemptSummary(ctx: PageContext): Html | '' {
  const reason = ctx.invoice.lastAttemptFailure;
  if (!reason || ctx.invoice.status !== 'created') return '';
  const m = t(ctx);
  return html`<div class="summary-box" role="alert" tabindex="-1" id="attempt-summary">
<h2>${m.attemptFailed}</h2>
<p>${m.attemptFailures[reason] ?? ''} ${m.tryAnotherCard(ctx.attemptsLeft)}</p>
</div>`;
}

function textField(
  ctx: PageContext,
  options: {
    id: keyof CardFormErrors;
    autocomplete: string;
    inputmode: string;
    maxlength: number;
    value?: string;
    error?: string;
    /** The card number shows its brand inside the field while the payer types. */
    brand?: boolean;
  },
): Html {
  const brandId = `${options.id}-brand`;
  const describedBy = `${options.id}-hint${options.error ? ` ${options.id}-error` : ''}${options.brand ? ` ${brandId}` : ''}`;
  const input = html`<input type="text" id="${options.id}" name="${options.id}" autocomplete="${options.autocomplete}" inputmode="${options.inputmode}" maxlength="${options.maxlength}" spellcheck="false" aria-describedby="${describedBy}"${options.error ? html` aria-invalid="true"` : ''} value="${options.value ?? ''}">`;
  return html`<div class="field">
<label for="${options.id}">${fieldText(ctx, options.id, 'label')}</label>
<span class="hint" id="${options.id}-hint">${fieldText(ctx, options.id, 'hint')}</span>
${options.brand ? html`<div class="input-with-brand">${input}<span class="brand" id="${brandId}" aria-live="polite" title="${t(ctx).cardBrand}"></span></div>` : input}
<span class="error" id="${options.id}-error"${options.error ? '' : html` hidden`}>${options.error ?? ''}</span>
</div>`;
}

function testCards(ctx: PageContext): Html | '' {
  if (!ctx.invoice.testMode) return '';
  const m = t(ctx);
  return html`<div class="note">
<strong>${m.testMode}:</strong> ${m.testCardsIntro}
<ul>
<li><code>4242 4242 4242 4242</code> ${m.testCards.success}</li>
<li><code>4000 0000 0000 3220</code> ${m.testCards.challenge}</li>
<li><code>4000 0000 0000 0002</code> ${m.testCards.declined}</li>
<li><code>4000 0000 0000 9995</code> ${m.testCards.funds}</li>
</ul>
</div>`;
}

/**
 * The card entry page. The card number and security code are never written back into the page,
 * even after an error: the payer types them again.
 */
export function cardPage(ctx: PageContext, state: { errors?: CardFormErrors; expiry?: string } = {}): string {
  const errors = state.errors ?? {};
  const m = t(ctx);
  const problem = (key: keyof CardFormErrors) => {
    const code = errors[key];
    return code ? { error: m.cardProblems[code] } : {};
  };
  const body = html`${heading(ctx, m.payTo(ctx.merchantName))}
${errorSummary(ctx, errors)}
${Object.keys(errors).length === 0 ? attemptSummary(ctx) : ''}
${summary(ctx)}
<h2>${m.payBy(ctx.methodName)}</h2>
<form method="post" action="${BASE}/pay" id="card-form" novalidate>
${hidden(ctx)}
${textField(ctx, { id: 'card_number', autocomplete: 'cc-number', inputmode: 'numeric', maxlength: 23, brand: true, ...problem('card_number') })}
<div class="row">
${textField(ctx, { id: 'expiry', autocomplete: 'cc-exp', inputmode: 'numeric', maxlength: 7, value: state.expiry ?? '', ...problem('expiry') })}
${textField(ctx, { id: 'cvc', autocomplete: 'cc-csc', inputmode: 'numeric', maxlength: 4, ...problem('cvc') })}
</div>
<button type="submit">${m.payButton(money(ctx, ctx.invoice.total))}</button>
</form>
<div class="actions">${cancelForm(ctx)}</div>
${testCards(ctx)}`;
  return checkoutLayout({
    title: `${m.payButton(money(ctx, ctx.invoice.total))} - ${ctx.merchantName}`,
    lang: ctx.locale,
    nonce: ctx.nonce,
    body,
    script: CARD_FORM_SCRIPT,
    // The script words its checks as the server does, in the payer's language.
    scriptData: { problems: m.cardProblems, brands: BRAND_NAMES },
  });
}

/** The sandbox page of e-wallet methods: the payer approves or declines in the "wallet". */
export function walletPage(ctx: PageContext): string {
  const m = t(ctx);
  const body = html`${heading(ctx, m.payTo(ctx.merchantName))}
${summary(ctx)}
<h2>${m.payWith(ctx.methodName)}</h2>
<p>${m.walletSandbox(ctx.methodName)}</p>
<div class="actions">
<form method="post" action="${BASE}/wallet">
${hidden(ctx)}
<input type="hidden" name="decision" value="approve">
<button type="submit">${m.approve(money(ctx, ctx.invoice.total))}</button>
</form>
<form method="post" action="${BASE}/wallet">
${hidden(ctx)}
<input type="hidden" name="decision" value="decline">
<button type="submit" class="danger">${m.decline}</button>
</form>
${cancelForm(ctx)}
</div>`;
  return checkoutLayout({
    title: `${m.payWith(ctx.methodName)} - ${ctx.merchantName}`,
    lang: ctx.locale,
    nonce: ctx.nonce,
    body,
  });
}

/** The card as shown after it was used: its brand and masked number. */
function maskedCard(masked: string): string {
  const brand = cardBrand(masked.slice(0, 6));
  return brand ? `${BRAND_NAMES[brand]} ${masked}` : masked;
}

/** The 3-D Secure-style step: the card issuer asks for a one-time code; the payer may cancel it. */
export function challengePage(ctx: PageContext): string {
  const m = t(ctx);
  const card = maskedCard(ctx.invoice.cardMasked ?? '');
  const body = html`${heading(ctx, m.confirmTitle)}
<p>${m.confirmText(money(ctx, ctx.invoice.total), ctx.merchantName, card)}</p>
<form method="post" action="${BASE}/confirm">
${hidden(ctx)}
<div class="field">
<label for="code">${fieldText(ctx, 'code', 'label')}</label>
<span class="hint" id="code-hint">${ctx.invoice.testMode ? m.testCodeHint(SANDBOX_3DS_CODE) : fieldText(ctx, 'code', 'hint')}</span>
<input type="text" id="code" name="code" autocomplete="one-time-code" inputmode="numeric" maxlength="8" aria-describedby="code-hint" autofocus>
</div>
<button type="submit">${m.confirmButton}</button>
</form>
<div class="actions">
<form method="post" action="${BASE}/challenge-cancel">
${hidden(ctx)}
<button type="submit" class="secondary">${m.cancelConfirmation}</button>
</form>
</div>`;
  return checkoutLayout({
    title: `${m.confirmTitle} - ${ctx.merchantName}`,
    lang: ctx.locale,
    nonce: ctx.nonce,
    body,
  });
}

/** The outcome, with the way back to the merchant. */
export function resultPage(ctx: PageContext): string {
  const { invoice } = ctx;
  const m = t(ctx);
  const ok = invoice.status === 'success';
  const title = ok ? m.successTitle : invoice.status === 'expired' ? m.expiredTitle : m.failedTitle;
  const message = ok
    ? m.paid(money(ctx, invoice.total), ctx.merchantName)
    : invoice.status === 'expired'
      ? m.expiredText
      : (m.failures[invoice.failureReason ?? ''] ?? m.genericFailure);
  const returnUrl = `${BASE}/return?invoice_id=${encodeURIComponent(invoice.id)}&token=${encodeURIComponent(ctx.token)}`;
  const body = html`${heading(ctx, title)}
<p class="status ${ok ? 'success' : 'failed'}" role="status">${message}</p>
${summary(ctx)}
${invoice.cardMasked ? html`<p>${m.card}: <strong>${maskedCard(invoice.cardMasked)}</strong></p>` : ''}
<p>${m.invoiceLine(invoice.id, invoice.referenceId)}</p>
<div class="actions"><a href="${returnUrl}" id="return-link">${m.returnTo(ctx.merchantName)}</a></div>`;
  return checkoutLayout({
    title: `${title} - ${ctx.merchantName}`,
    lang: ctx.locale,
    nonce: ctx.nonce,
    body,
  });
}

/** A link that cannot be used (unknown invoice, wrong token) or a form that cannot be read. */
export function problemPage(
  nonce: string,
  locale: Locale,
  kind: 'link_invalid' | 'cannot_start',
  detail?: string,
): string {
  const m = MESSAGES[locale];
  const title = kind === 'link_invalid' ? m.linkInvalidTitle : m.cannotStartTitle;
  // The gateway's own reason (an API message, in English) follows the payer's-language advice.
  const reason = kind === 'cannot_start' && detail ? html`<p lang="en"><code>${detail}</code></p>` : '';
  return checkoutLayout({
    title,
    lang: locale,
    nonce,
    body: html`<h1>${title}</h1><p>${m.linkInvalidText}</p>${reason}`,
  });
}
