import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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
