import { describe, expect, it } from 'vitest';
import { DocumentAnalyser } from '../src/graphql/document.js';

describe('DocumentAnalyser memo', () => {
  it('is bounded in bytes, not only in entries', () => {
    const analyser = new DocumentAnalyser({ maxEntries: 1000, maxBytes: 1_000_000 });
    const padding = 'x'.repeat(100_000);
    for (let i = 0; i < 50; i += 1) {
      const analysis = analyser.analyse(`query Q${i} { posts { nodes { id } } } # ${padding}`, null);
      expect(analysis.ok).toBe(true);
    }
    expect(analyser.stats.bytes).toBeLessThanOrEqual(1_000_000);
    expect(analyser.stats.entries).toBeLessThan(50);
    // Small documents are still remembered.
    analyser.analyse('{ posts { nodes { id } } }', null);
    expect(analyser.stats.entries).toBeGreaterThan(0);
  });
});
