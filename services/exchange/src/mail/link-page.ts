/**
 * The small HTML pages behind e-mailed links (pure). A GET only shows what the link will do, with a
 * button that POSTs: mail scanners and link previews fetch GETs, and must not confirm a withdrawal.
 * No scripts, no external assets.
 */

const PURPOSE_LABELS: Readonly<Record<string, string>> = {
  withdrawal: 'withdrawal request',
  svc_code: 'transfer code',
  withdraw_address: 'withdrawal address book entry',
};

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
button{font-size:1rem;padding:.6rem 1.2rem;border:0;border-radius:.3rem;background:#1d4ed8;color:#fff;cursor:pointer}
button:focus{outline:3px solid #f59e0b;outline-offset:2px}
.cancel button{background:#b91c1c}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export function purposeLabel(purpose: string): string {
  return PURPOSE_LABELS[purpose] ?? purpose;
}

/** The page of a usable link: what it will do and one button. */
export function confirmPage(
  purpose: string,
  subjectId: number,
  action: 'confirm' | 'cancel',
  formAction: string,
): string {
  const what = `${purposeLabel(purpose)} #${subjectId}`;
  const verb = action === 'confirm' ? 'Confirm' : 'Cancel';
  return page(
    `${verb} ${what}`,
    `<p>This link will ${action} your ${escapeHtml(what)}. It works once.</p>
<form method="post" action="${escapeHtml(formAction)}" class="${action}">
<button type="submit">${verb} ${escapeHtml(what)}</button>
</form>`,
  );
}

/** The page after a link was used, or of a link that cannot be used. */
export function resultPage(title: string, message: string): string {
  return page(title, `<p>${escapeHtml(message)}</p>`);
}
