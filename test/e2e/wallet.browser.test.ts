import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import jsqr from 'jsqr';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { createWalletClient, decodeFunctionData, type Hex, http, parseAbi } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type WatchDeps, watchOnce } from '../../src/features/chain-watch/index.ts';
import { startWatchedWorld, type X402World } from '../chain/x402-setup.ts';
import { chromiumInstalled, closeChromium, launchChromium, requireChromium } from './browser.ts';

// The pay page's stablecoin rail against a real chain: the QR decodes to the EIP-681 transfer,
// and "Pay with wallet" drives an injected EIP-1193 wallet (a stub in the page whose every
// request is answered here, signing with a real viem account on anvil). The account watch then
// books the transfer and the open page turns to Paid without a reload.

// jsqr is CommonJS: at run time its function is the module itself; to the checker, its default.
const jsQR = ((jsqr as unknown as { default?: unknown }).default ?? jsqr) as typeof jsqr.default;
const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const TRANSFER_ABI = parseAbi(['function transfer(address to, uint256 value) returns (bool)']);
type WalletCall = { method: string; params: unknown };
type WalletAnswer = { result?: unknown; error?: { code: number; message: string } };

let w: X402World;
let browser: Browser | undefined;
let watch: WatchDeps;
let closeWorld: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  ({ w, deps: watch, close: closeWorld } = await startWatchedWorld());
  browser = await launchChromium();
}, 600_000);
afterAll(async () => {
  await closeChromium(browser);
  await closeWorld?.();
});
beforeEach(({ skip }) => requireChromium(skip));

/** Decodes the page's QR code from a screenshot of it, as a phone's camera would. */
async function readQr(page: Page): Promise<string> {
  const png = PNG.sync.read(await page.locator('#pay-qr svg').screenshot());
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  if (!code) throw new Error('No QR code could be read from the page.');
  return code.data;
}

/**
 * Installs a wallet in the page before its scripts run. Each request goes to `answer` in the
 * test; errors keep their EIP-1193 code. `announce` uses EIP-6963; otherwise only
 * window.ethereum is set, as older wallets do.
 */
async function injectWallet(
  page: Page,
  answer: (call: WalletCall) => Promise<WalletAnswer>,
  announce: boolean,
) {
  await page.exposeFunction('__testWalletRequest', (call: WalletCall) => answer(call));
  // Plain JavaScript run in the page before its own scripts (the checker has no DOM types here).
  const provider = `{ request: async (call) => {
    const answered = await window.__testWalletRequest(call);
    if (answered.error) throw Object.assign(new Error(answered.error.message), answered.error);
    return answered.result;
  } }`;
  const eip6963 = `const info = { uuid: 'a3c1f0e4-test-wallet', name: 'Test Wallet', rdns: 'test.wallet',
      icon: 'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1" fill="%23f6851b"/></svg>' };
    const announce = () => window.dispatchEvent(
      new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }));
    window.addEventListener('eip6963:requestProvider', announce);
    announce();`;
  await page.addInitScript({
    content: `(() => { const provider = ${provider}; ${announce ? eip6963 : 'window.ethereum = provider;'} })();`,
  });
}

/** A wallet that starts on Ethereum mainnet, knows no other chain, and signs with `account`. */
function signingWallet(account: PrivateKeyAccount) {
  const calls: WalletCall[] = [];
  const known = new Map<string, string | undefined>([['0x1', undefined]]);
  let current = '0x1';
  const answer = async (call: WalletCall): Promise<WalletAnswer> => {
    calls.push(call);
    const [param] = (call.params ?? []) as Record<string, unknown>[];
    switch (call.method) {
      case 'eth_requestAccounts':
        return { result: [account.address] };
      case 'eth_chainId':
        return { result: current };
      case 'wallet_switchEthereumChain': {
        const wanted = String(param?.chainId);
        if (!known.has(wanted)) return { error: { code: 4902, message: 'Unrecognized chain ID.' } };
        current = wanted;
        return { result: null };
      }
      case 'wallet_addEthereumChain':
        known.set(String(param?.chainId), (param?.rpcUrls as string[] | undefined)?.[0]);
        return { result: null };
      case 'eth_sendTransaction': {
        const rpcUrl = known.get(current);
        if (!rpcUrl) return { error: { code: -32000, message: 'No RPC for this chain.' } };
        const wallet = createWalletClient({
          chain: w.local.walletClient.chain,
          transport: http(rpcUrl),
          account,
        });
        const hash = await wallet.sendTransaction({
          to: param?.to as Hex,
          data: param?.data as Hex,
          value: BigInt(String(param?.value ?? '0x0')),
        });
        return { result: hash };
      }
      default:
        return { error: { code: 4200, message: `Unsupported method ${call.method}.` } };
    }
  };
  return { calls, answer };
}

async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 15_000,
) {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline)
      throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

const textOf = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? '').trim();

describe('the pay page’s stablecoin rail with a wallet', () => {
  it('shows a QR code that decodes to the EIP-681 transfer: token, chain id, recipient and the exact amount in base units', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2.5', { account_id: s.account.id });
    const page = await browser!.newPage({ deviceScaleFactor: 2 });
    try {
      await page.goto(`${w.base}/pay/${request.token}`);
      const uri = await readQr(page);
      expect(uri).toBe(
        `ethereum:${w.token.address}@${w.local.network.chainId}/transfer?address=${s.address}&uint256=2500000`,
      );
      const parsed =
        /^ethereum:(0x[0-9a-fA-F]{40})@(\d+)\/transfer\?address=(0x[0-9a-fA-F]{40})&uint256=(\d+)$/.exec(uri);
      expect(parsed?.slice(1)).toEqual([w.token.address, '31337', s.address, '2500000']);
      // The same transfer is a link for a wallet app on this device.
      expect(await page.getAttribute('#wallet-link', 'href')).toBe(uri);
      expect(await textOf(page, '#amount')).toBe('2.50 USDC');
    } finally {
      await page.close();
    }
  });

  it('pays with an EIP-6963 wallet: adds and switches to the chain, sends the exact transfer, and the page turns to Paid without a reload', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '3', { account_id: s.account.id });
    const payer = await w.payer(0n);
    await w.local.fund(payer.address, 10_000_000n);
    const wallet = signingWallet(payer);
    const page = await browser!.newPage();
    let loads = 0;
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      await injectWallet(page, wallet.answer, true);
      await page.goto(`${w.base}/pay/${request.token}`);
      page.on('load', () => loads++);
      const button = page.getByRole('button', { name: 'Pay with Test Wallet' });
      await button.waitFor();
      mkdirSync(RESULTS_DIR, { recursive: true });
      await page.screenshot({ path: `${RESULTS_DIR}pay-page-wallet.png`, fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: `${RESULTS_DIR}pay-page-wallet-phone.png`, fullPage: true });
      await button.click();
      const sent = await waitFor(
        () => textOf(page, '#wallet-result'),
        (text) => text.startsWith('Sent'),
        'the wallet result',
      );
      const send = wallet.calls.find((call) => call.method === 'eth_sendTransaction')!;
      const [tx] = send.params as { from: string; to: string; data: Hex; value: string }[];
      expect(tx).toMatchObject({ from: payer.address, to: w.token.address, value: '0x0' });
      expect(decodeFunctionData({ abi: TRANSFER_ABI, data: tx!.data }).args).toEqual([s.address, 3_000_000n]);
      expect(wallet.calls.map((call) => call.method)).toEqual([
        'eth_requestAccounts',
        'eth_chainId',
        'wallet_switchEthereumChain',
        'wallet_addEthereumChain',
        'wallet_switchEthereumChain',
        'eth_chainId',
        'eth_sendTransaction',
      ]);
      const add = wallet.calls.find((call) => call.method === 'wallet_addEthereumChain')!;
      expect((add.params as { chainId: string; rpcUrls: string[] }[])[0]).toMatchObject({
        chainId: '0x7a69',
        rpcUrls: [w.local.rpcUrl],
      });
      const hash = /transaction (0x[0-9a-f]{64})/.exec(sent)?.[1] as Hex;
      expect((await w.local.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
      // While a second click could pay twice, the button stays disabled.
      expect(await button.isDisabled()).toBe(true);

      expect(await textOf(page, '#status')).toBe('Awaiting payment');
      await watchOnce(watch);
      await waitFor(
        () => textOf(page, '#status'),
        (text) => text === 'Paid',
        'the status badge',
      );
      expect(await page.locator('#paid-note').isVisible()).toBe(true);
      expect(await page.locator('#rail-stablecoin').isHidden()).toBe(true);
      expect(loads).toBe(0);
      expect(problems).toEqual([]);
      await page.screenshot({ path: `${RESULTS_DIR}pay-page-wallet-paid.png`, fullPage: true });
      expect(
        (await w.api('GET', `/integration/payment-requests/${request.token}`, s.key.key)).body,
      ).toMatchObject({
        status: 'paid',
        amount_received: '3.00000000',
      });
      expect(await w.usdcOf(s.address)).toBe(3_000_000n);
    } finally {
      await page.close();
    }
  });

  it('falls back to window.ethereum, and a payer who declines in the wallet sends nothing and may try again', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '1', { account_id: s.account.id });
    const calls: string[] = [];
    const page = await browser!.newPage();
    try {
      await injectWallet(
        page,
        async (call) => {
          calls.push(call.method);
          if (call.method === 'eth_requestAccounts') return { result: [s.address] };
          if (call.method === 'eth_chainId') return { result: '0x7a69' };
          if (call.method === 'eth_sendTransaction')
            return { error: { code: 4001, message: 'User rejected the request.' } };
          return { error: { code: 4200, message: 'Unsupported.' } };
        },
        false,
      );
      await page.goto(`${w.base}/pay/${request.token}`);
      const button = page.getByRole('button', { name: 'Pay with wallet' });
      await button.click();
      await waitFor(
        () => textOf(page, '#wallet-result'),
        (text) => text.includes('declined'),
        'the wallet result',
      );
      // Already on the right chain: no switch was asked for.
      expect(calls).toEqual(['eth_requestAccounts', 'eth_chainId', 'eth_sendTransaction']);
      expect(await button.isDisabled()).toBe(false);
      expect(await textOf(page, '#status')).toBe('Awaiting payment');
    } finally {
      await page.close();
    }
  });
});
