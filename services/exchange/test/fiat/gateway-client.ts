import { paygateHeaders } from '../../src/fiat/signature.js';
import type { App } from '../../src/http/typed.js';

/** Small helpers of the tests that play the payer at the gateway, over plain HTTP forms (no JavaScript). */

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status, // biome-ignore lint/suspicious/noExplicitAny: the tests read gateway answers of several shapes
    json: text ? (JSON.parse(text) as Record<string, any>) : {},
  };
}

/** Hidden inputs of the first form of an HTML page whose action ends with `actionSuffix`. */
export function formFields(
  html: string,
  actionSuffix: string,
): { action: string; fields: Record<string, string> } {
  const forms = html.split(/<form\b/i).slice(1);
  for (const form of forms) {
    const action = /action="([^"]+)"/i.exec(form)?.[1]?.replaceAll('&amp;', '&');
    if (!action || !(action.split('?')[0] ?? '').endsWith(actionSuffix)) continue;
    const fields: Record<string, string> = {};
    for (const input of form.split('</form>')[0]!.matchAll(/<input\b[^>]*>/gi)) {
      const name = /name="([^"]+)"/i.exec(input[0])?.[1];
      const value = /value="([^"]*)"/i.exec(input[0])?.[1] ?? '';
      if (name && /type="hidden"/i.test(input[0])) fields[name] = value.replaceAll('&amp;', '&');
    }
    return { action, fields };
  }
  throw new Error(`no form posting to ${actionSuffix} in the page`);
}

/** Submits a form like a browser without JavaScript: follows 303s, answers the final page. */
export async function submitForm(
  base: string,
  action: string,
  fields: Record<string, string>,
): Promise<{ status: number; url: string; html: string }> {
  let response = await fetch(new URL(action, base), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  let url = new URL(action, base).toString();
  for (let hops = 0; response.status === 303 && hops < 5; hops += 1) {
    url = new URL(response.headers.get('location')!, url).toString();
    response = await fetch(url, { redirect: 'manual' });
  }
  return { status: response.status, url, html: await response.text() };
}

/** Pays the hosted page `html` (its card form) with `card`, as a browser without JavaScript; the page after. */
export function payByCard(base: string, html: string, card = '4242424242424242') {
  const { action, fields } = formFields(html, '/pay');
  return submitForm(base, action, { ...fields, card_number: card, expiry: '12/39', cvc: '123' });
}

/** A callback signed as the gateway signs it (merchant secret over the exact bytes). */
export function signedCallback(body: unknown, secret = 'sandbox-exchange-secret', nowMs = Date.now()) {
  const text = JSON.stringify(body);
  return {
    text,
    headers: { 'content-type': 'application/json', ...paygateHeaders('exchange', secret, text, nowMs) },
  };
}

/** Delivers `body` to the exchange's callback route, signed as the gateway signs it. */
export async function deliverCallback(exchange: App, body: unknown) {
  const signed = signedCallback(body);
  const response = await exchange.inject({
    method: 'POST',
    url: '/v3/paygate/callback',
    headers: signed.headers,
    payload: signed.text,
  });
  return { status: response.statusCode, body: response.json() as unknown };
}
