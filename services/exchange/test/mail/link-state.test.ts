import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/mail/link-page.js';
import { linkState } from '../../src/mail/links.js';

describe('linkState', () => {
  it('is usable before expiry, expired at and after it, used once used whatever the time', () => {
    expect(linkState({ expiresAt: 1000, usedAt: null }, 999)).toBe('usable');
    expect(linkState({ expiresAt: 1000, usedAt: null }, 1000)).toBe('expired');
    expect(linkState({ expiresAt: 1000, usedAt: 500 }, 600)).toBe('used');
    expect(linkState({ expiresAt: 1000, usedAt: 500 }, 5000)).toBe('used');
  });
});

describe('escapeHtml', () => {
  it('escapes every character that could open markup or an attribute', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});
