import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkCost, DEFAULT_QUERY_LIMITS, inspectQuery } from '@platform/graphql-limits/limits';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/processes.js';

// The default limits must let through every query the project's own clients send: the GraphQL
// documents written in both services' sources, tests, benchmarks and READMEs, and in the packages
// that talk to them (the launcher's benchmark, the logging test), except the hostile ones written on
// purpose in the limits' own tests.
const ROOTS = [
  'services/graphql-proxy/src',
  'services/graphql-proxy/test',
  'services/graphql-proxy/bench',
  'services/graphql-proxy/README.md',
  'services/blog-graphql/src',
  'services/blog-graphql/test',
  'services/blog-graphql/README.md',
  'packages/launcher/bench',
  'packages/logging/test',
  'README.md',
];

function files(entry: string): string[] {
  const full = path.join(REPO_ROOT, entry);
  if (statSync(full).isFile()) return [full];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(full, name))
    .filter((name) => /\.(ts|md)$/.test(name) && !/query-limits|limits\.(property\.)?test/.test(name));
}

/** String literals (quotes, backticks without substitutions, JSON in READMEs) that look like a GraphQL operation. */
function documents(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/(['`"])((?:query|mutation)\b[^'`"]*|\{\s*\w+[\s(:{][^'`"]*)\1/g)) {
    const candidate = (match[2] as string).replace(/\\n/g, '\n').replace(/\\"/g, '"');
    if (!candidate.includes('${')) found.add(candidate);
  }
  return [...found];
}

describe('the default limits and the queries this project sends', () => {
  it('pass every GraphQL document found in sources, tests, benchmarks and READMEs', () => {
    const checked: string[] = [];
    const refused: string[] = [];
    for (const file of ROOTS.flatMap(files)) {
      // The READMEs' "Query limits" sections show a refused query on purpose.
      const text = readFileSync(file, 'utf8').replace(/## Query limits[\s\S]*?(?=\n## )/, '');
      for (const query of documents(text)) {
        const inspection = inspectQuery(query, null, DEFAULT_QUERY_LIMITS);
        if (!inspection.ok) {
          // Not GraphQL after all (a JSON object, a code block), or a deliberately broken document.
          if (inspection.refusal.code === 'QUERY_LIMIT_EXCEEDED')
            refused.push(`${file}: ${inspection.refusal.message}`);
          continue;
        }
        if (!inspection.operation) continue;
        checked.push(query);
        const refusal = checkCost(inspection.operation, {}, DEFAULT_QUERY_LIMITS);
        if (refusal) refused.push(`${file}: ${refusal.message}\n${query}`);
      }
    }
    expect(refused).toEqual([]);
    // The extraction found the documents (a broken regex must not make this test pass vacuously).
    expect(checked.length).toBeGreaterThan(50);
  });
});
