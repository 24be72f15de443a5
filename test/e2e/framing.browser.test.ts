import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import {
  CHROMIUM_PATH,
  chromiumInstalled,
  closeChromium,
  inCi,
  launchChromium,
  MISSING_CHROMIUM,
} from './browser.ts';

// Framing in a real browser: a site whose control the space proved frames its payment page; a
// site that proved nothing gets Chromium's refusal instead of the page.

let h: Harness;
let browser: Browser | undefined;
let base: string;
const sites: Server[] = [];

/** A loopback site: publishes `token` at the well-known path and frames `payUrl` at /shop. */
async function startSite(state: { token: string; payUrl: string }): Promise<number> {
  const server = createServer((req, res) => {
    if (req.url === '/.well-known/tollbook-site.txt') return res.writeHead(200).end(state.token);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><h1>Shop</h1><iframe id="pay" src="${state.payUrl}" width="600" height="600"></iframe>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sites.push(server);
  return (server.address() as AddressInfo).port;
}

describe('framing a payment page', () => {
  beforeAll(async () => {
    if (!chromiumInstalled) return;
    browser = await launchChromium();
    h = await createHarness({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await closeChromium(browser);
    await Promise.all(sites.map((server) => new Promise((resolve) => server.close(resolve))));
    await h?.close();
  });
  beforeEach((ctx) => {
    if (chromiumInstalled) return;
    if (inCi) throw new Error(MISSING_CHROMIUM);
    ctx.skip(`Chromium is not installed at ${CHROMIUM_PATH} (skipped outside CI only; in CI this fails)`);
  });

  it('shows the page inside a proven site and refuses it inside any other', async () => {
    const world = await h.world({ scopes: ['payments'] });
    const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const minted = await h.inject({
      method: 'POST',
      url: '/integration/payment-requests',
      key: world.key.key,
      payload: { account_id: bank.id, amount: '4.2', memo: 'Framed order' },
    });
    const payUrl = `${base}/pay/${minted.json().token}`;
    const proven = { token: '', payUrl };
    const provenPort = await startSite(proven);
    const strangerPort = await startSite({ token: '', payUrl });
    const provenOrigin = `http://localhost:${provenPort}`;
    const sitesUrl = `/app/api/spaces/${world.spaceId}/sites`;
    const added = (
      await h.inject({
        method: 'POST',
        url: sitesUrl,
        session: world.owner.token,
        payload: { origin: provenOrigin },
      })
    ).json();
    proven.token = added.token;
    const verified = await h.inject({
      method: 'POST',
      url: `${sitesUrl}/${added.id}/verify`,
      session: world.owner.token,
    });
    expect(verified.json().verified, verified.body).toBe(true);

    const page = await browser!.newPage();
    try {
      await page.goto(`${provenOrigin}/shop`, { waitUntil: 'load' });
      const framed = await (await page.$('#pay'))!.contentFrame();
      expect(framed!.url()).toBe(payUrl);
      expect(await framed!.textContent('body')).toContain('Framed order');

      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      await page.goto(`http://127.0.0.1:${strangerPort}/shop`, { waitUntil: 'load' });
      const refused = await (await page.$('#pay'))!.contentFrame();
      expect(refused!.url()).not.toBe(payUrl);
      expect(errors.join('\n')).toMatch(/frame-ancestors/);
      const text = await refused!.evaluate('document.body ? document.body.innerText : ""').catch(() => '');
      expect(String(text)).not.toContain('Framed order');
    } finally {
      await page.close();
    }
  });
});
