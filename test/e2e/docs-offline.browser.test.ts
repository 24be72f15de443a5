import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

// /docs is served by this server alone: Chromium renders the API reference while every request
// the page makes is intercepted; any to another origin (fonts, telemetry, an AI agent) is
// refused before it leaves the machine and fails the test.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
let base: string;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  app = await startBrowserApp();
  ({ base } = app);
});
afterAll(() => app?.close());
beforeEach(({ skip }) => requireChromium(skip));

describe('/docs in a browser', () => {
  it('renders the API reference and requests nothing outside the server’s origin, with no Ask AI', async () => {
    const context = await app!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const ours: string[] = [];
    const outside: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`) || url.startsWith('data:') || url.startsWith('blob:')) {
        ours.push(url);
        return route.continue();
      }
      outside.push(url);
      return route.abort('blockedbyclient');
    });
    await page.goto(`${base}/docs`);
    await page.getByText('Check a key').first().waitFor();
    await page.waitForLoadState('networkidle');
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: `${RESULTS_DIR}docs.png` });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${RESULTS_DIR}docs-phone.png` });
    expect(ours.some((url) => url.endsWith('/openapi.json'))).toBe(true);
    expect(outside).toEqual([]);
    expect(await page.getByText(/Ask AI/i).count()).toBe(0);
    expect(await page.getByText('Developer Tools').count()).toBe(0);
    await context.close();
  });
});
