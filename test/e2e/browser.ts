import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { createHarness, type HarnessOptions } from '../harness.ts';

// Browser tests drive Debian's `chromium` package through playwright-core, which never downloads
// a browser of its own. .ci/run installs the package; a developer installs it with
// `apt-get install -y chromium`.

export const CHROMIUM_PATH = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const inCi = process.env.CI === 'true';
export const chromiumInstalled = existsSync(CHROMIUM_PATH);

export const MISSING_CHROMIUM = `Chromium is not installed at ${CHROMIUM_PATH}: the browser tests need Debian's chromium package (apt-get install -y chromium; .ci/run installs it).`;

/** Starts headless Chromium; throws a sentence naming the missing package when it is not there. */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumInstalled) throw new Error(MISSING_CHROMIUM);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 20_000 });
}

/** Closes the browser if it was started; safe to call from an afterAll whose beforeAll failed. */
export async function closeChromium(browser: Browser | undefined): Promise<void> {
  if (browser) await browser.close();
}

/**
 * The guard every browser test runs first: in CI a missing Chromium fails the test with the
 * reason; on a developer machine without it (outside CI) the test is skipped, the one allowed skip.
 */
export function requireChromium(skip: (note: string) => void): void {
  if (chromiumInstalled) return;
  if (inCi) throw new Error(MISSING_CHROMIUM);
  skip(`Chromium is not installed at ${CHROMIUM_PATH} (skipped outside CI only; in CI this fails)`);
}

/** Chromium and the real app listening on a loopback port, as a person's browser meets it. */
export async function startBrowserApp(options: HarnessOptions = {}) {
  const browser = await launchChromium();
  const h = await createHarness(options);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  return {
    browser,
    h,
    base,
    close: async () => {
      await closeChromium(browser);
      await h.close();
    },
  };
}
