/**
 * How deeply a parsed JSON value nests, walked without recursion (a recursive walk, or
 * `JSON.stringify`, overflows the stack on `variables` nested 20,000 levels deep), stopping as soon as
 * it passes `max`. Returns the depth found, at most `max + 1`. A scalar is depth 0, `{}` and `[]` 1.
 */
export function jsonDepth(value: unknown, max: number): number {
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop() as { value: unknown; depth: number };
    if (next.value === null || typeof next.value !== 'object') continue;
    const depth = next.depth + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > max) return deepest;
    const children = Array.isArray(next.value) ? next.value : Object.values(next.value);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth });
    }
  }
  return deepest;
}
