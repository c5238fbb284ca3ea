import { describe, expect, it } from 'vitest';
import { launchBrowser } from '../src/browser.js';

describe('launchBrowser', () => {
  it('runs pages with and without JavaScript in a fresh profile', async () => {
    for (const javaScriptEnabled of [true, false]) {
      const browser = await launchBrowser({ javaScriptEnabled });
      try {
        const page = await browser.context.newPage();
        await page.setContent(
          '<p id="out">static</p><script>document.getElementById("out").textContent = "scripted"</script>',
        );
        expect(await page.textContent('#out')).toBe(javaScriptEnabled ? 'scripted' : 'static');
      } finally {
        await browser.close();
      }
    }
  });

  it('names the Debian package when chromium is missing', async () => {
    await expect(launchBrowser({ executablePath: '/nonexistent/chromium' })).rejects.toThrow(
      /apt-get install -y chromium/,
    );
  });
});
