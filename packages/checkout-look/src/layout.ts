import { Html, html } from './html.js';

/**
 * One look for every page a payer sees: the gateway's hosted payment page and the exchange's return
 * page. Inline only: the pages load nothing from anywhere (no fonts, images or scripts from outside).
 * Colours keep a contrast ratio of at least 4.5:1 on white (WCAG AA).
 */
export const CHECKOUT_CSS = `
*{box-sizing:border-box}
body{margin:0;padding:0 1rem;background:#f3f4f6;color:#111827;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:30rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #d1d5db;border-radius:.75rem}
@media (max-width:30rem){main{margin:1rem auto;padding:1.25rem 1rem}}
h1{font-size:1.375rem;margin:0 0 1rem}
h2{font-size:1.0625rem;margin:1.25rem 0 .5rem}
dl.summary{display:grid;grid-template-columns:auto 1fr;row-gap:.25rem;margin:0 0 1rem}
dl.summary dt{color:#374151;padding-right:1rem}
dl.summary dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
dl.summary .total{font-weight:700;border-top:1px solid #d1d5db;padding-top:.25rem}
.field{margin:0 0 1rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
.hint{display:block;color:#4b5563;font-size:.875rem;margin-bottom:.25rem}
.input-with-brand{position:relative}
.input-with-brand input{padding-right:7rem}
.brand{position:absolute;right:.5rem;top:50%;transform:translateY(-50%);font-size:.8125rem;font-weight:700;color:#1e3a8a;background:#eff6ff;border:1px solid #93c5fd;border-radius:.25rem;padding:0 .375rem}
.brand:empty{display:none}
input[type=text]{width:100%;padding:.625rem .75rem;font:inherit;border:1px solid #6b7280;border-radius:.375rem;background:#fff;color:#111827}
input[aria-invalid=true]{border:2px solid #b91c1c}
.error{display:block;color:#b91c1c;font-size:.9375rem;margin-top:.25rem}
.row{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
.row>.field{display:flex;flex-direction:column}
.row>.field .hint{flex-grow:1}
button{font:inherit;font-weight:600;padding:.75rem 1rem;border-radius:.375rem;border:1px solid #1e40af;background:#1d4ed8;color:#fff;cursor:pointer;width:100%}
button.secondary{background:#fff;color:#1e3a8a;border-color:#6b7280}
button.danger{background:#fff;color:#991b1b;border-color:#991b1b}
a{color:#1d4ed8}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.summary-box{border:2px solid #b91c1c;border-radius:.5rem;padding:.75rem 1rem;margin:0 0 1rem;background:#fef2f2}
.summary-box h2{margin:0 0 .25rem;font-size:1rem;color:#991b1b}
.summary-box p{margin:0}
.summary-box ul{margin:0;padding-left:1.25rem}
.note{background:#eff6ff;border:1px solid #bfdbfe;border-radius:.5rem;padding:.75rem 1rem;font-size:.9375rem;margin:1rem 0}
.note ul{margin:.25rem 0 0;padding-left:1.25rem}
.status{font-size:1.125rem;font-weight:700}
.status.success{color:#166534}
.status.failed{color:#991b1b}
.status.unknown{color:#92400e}
.actions{display:grid;gap:.75rem;margin-top:1rem}
.badge{display:inline-block;font-size:.75rem;font-weight:700;letter-spacing:.05em;text-transform:uppercase;color:#92400e;background:#fef3c7;border:1px solid #f59e0b;border-radius:.25rem;padding:0 .375rem;margin-left:.5rem;vertical-align:middle}
code{font-family:ui-monospace,monospace;font-size:.9375rem;overflow-wrap:anywhere}
`;

export interface LayoutOptions {
  readonly title: string;
  /** The `lang` of the page (BCP 47), e.g. `uk`. @default 'en' */
  readonly lang?: string;
  /** The CSP nonce of the inline style and script; none for pages served without a CSP. */
  readonly nonce?: string;
  readonly body: Html;
  /** Our own script (a constant, never built from input). */
  readonly script?: string;
  /** Data for the script, written as a JSON block (not executed, so no nonce needed). */
  readonly scriptData?: unknown;
}

/** `</script>` and friends cannot end a JSON block early. */
function jsonBlock(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** The page frame: one `<main>` landmark, the inline style and an optional inline script. */
export function checkoutLayout(options: LayoutOptions): string {
  const nonce = options.nonce ? ` nonce="${options.nonce}"` : '';
  const style = new Html(`<style${nonce}>${CHECKOUT_CSS}</style>`);
  const data =
    options.scriptData === undefined
      ? ''
      : new Html(`<script type="application/json" id="page-data">${jsonBlock(options.scriptData)}</script>`);
  const script = options.script ? new Html(`<script${nonce}>${options.script}</script>`) : '';
  return html`<!doctype html>
<html lang="${options.lang ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${options.title}</title>
${style}
</head>
<body>
<main>
${options.body}
</main>
${data}
${script}
</body>
</html>`.text;
}
