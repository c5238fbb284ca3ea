/**
 * Other spellings of a concrete path (issue 41): what a router may decode or normalise to the same
 * route, or that a check of the raw text may read differently from the router. Each variant is a
 * request target sent as is (no client normalises it): percent-escaped characters (lower- and
 * upper-case hex, one segment or all of it), doubled slashes, dot segments (plain and escaped),
 * mixed case, a trailing slash, an escaped slash, a semicolon, a double escape and a query string.
 */

const hex = (char: string, upper: boolean): string => {
  const code = (char.codePointAt(0) ?? 0).toString(16).padStart(2, '0');
  return `%${upper ? code.toUpperCase() : code}`;
};

const escapeAll = (segment: string, upper: boolean): string =>
  [...segment].map((char) => hex(char, upper)).join('');

const escapeFirst = (segment: string, upper: boolean): string =>
  segment.length === 0 ? segment : `${hex(segment[0] as string, upper)}${segment.slice(1)}`;

const alternateCase = (segment: string): string =>
  [...segment].map((char, n) => (n % 2 === 0 ? char.toUpperCase() : char.toLowerCase())).join('');

/** `path` is concrete (`/queue/abc/retry`): every variant, labelled, without duplicates or `path` itself. */
export function pathVariants(path: string): Array<{ label: string; target: string }> {
  const segments = path.split('/').slice(1);
  const join = (parts: readonly string[]): string => `/${parts.join('/')}`;
  const each = (change: (segment: string) => string) =>
    segments.map((_, n) => join(segments.map((segment, m) => (m === n ? change(segment) : segment))));
  const variants: Array<[string, string]> = [
    ['first character of every segment escaped', join(segments.map((s) => escapeFirst(s, false)))],
    ['every character escaped, upper-case hex', join(segments.map((s) => escapeAll(s, true)))],
    ...each((s) => escapeFirst(s, false)).map((t): [string, string] => ['one segment escaped', t]),
    ...each((s) => escapeAll(s, false)).map((t): [string, string] => ['one segment fully escaped', t]),
    ['doubled leading slash', `/${path}`],
    ...segments
      .slice(1)
      .map((_, n): [string, string] => [
        'doubled inner slash',
        join([...segments.slice(0, n + 1), '', ...segments.slice(n + 1)]),
      ]),
    ['trailing slash', `${path}/`],
    ['escaped, trailing slash', `${join(segments.map((s) => escapeFirst(s, false)))}/`],
    ['dot segment first', join(['.', ...segments])],
    ['dot segment last', `${path}/.`],
    ['dot-dot segment', join(['x', '..', ...segments])],
    ['escaped dot segment', join(['%2e', ...segments])],
    ['escaped dot-dot segment', join(['x', '%2E%2E', ...segments])],
    ['upper case', path.toUpperCase()],
    ['mixed case', join(segments.map(alternateCase))],
    ...each((s) => s.slice(0, 1).toUpperCase() + s.slice(1)).map((t): [string, string] => [
      'one segment capitalised',
      t,
    ]),
    ['escaped slash', segments.length > 1 ? `/${segments.join('%2F')}` : `/%2F${segments[0]}`],
    ['semicolon parameter', join(segments.map((s, n) => (n === 0 ? `${s};x=1` : s)))],
    ['double escape', join(segments.map((s) => `%25${escapeFirst(s, false).slice(1)}`))],
    ['escaped, with a query string', `${join(segments.map((s) => escapeFirst(s, false)))}?x=1`],
  ];
  const seen = new Set<string>([path]);
  return variants
    .filter(([, target]) => {
      if (seen.has(target)) return false;
      seen.add(target);
      return true;
    })
    .map(([label, target]) => ({ label, target }));
}
