import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../harness.ts';
import { chromiumInstalled, requireChromium, startBrowserApp } from './browser.ts';

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
  let app: Awaited<ReturnType<typeof startBrowserApp>> | undefined;
  beforeAll(async () => {
    if (!chromiumInstalled) return;
    app = await startBrowserApp({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
    ({ browser, h, base } = app);
  });
  afterAll(async () => {
    await Promise.all(sites.map((server) => new Promise((resolve) => server.close(resolve))));
    await app?.close();
  });
  beforeEach(({ skip }) => requireChromium(skip));

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
