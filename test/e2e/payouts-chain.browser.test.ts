import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { createWalletClient, decodeFunctionData, erc20Abi, type Hex, http } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { followChainPayouts } from '../../src/features/payouts/index.ts';
import { startX402World, type X402World } from '../chain/x402-setup.ts';
import { holdLocalChainPayouts } from '../support/turns.ts';
import { chromiumInstalled, closeChromium, launchChromium, requireChromium } from './browser.ts';

holdLocalChainPayouts();

// A chain payment sent from its detail page: "Send with wallet" asks an injected EIP-1193
// wallet (a stub in the page whose requests a real viem account answers on anvil) to switch to
// the payment's chain and send the unsigned ERC-20 transfer; the page reports the hash, and the
// chain follower executes the payment once the network's confirmations are there.

const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));
const DESTINATION = '0x000000000000000000000000000000000000bEEF';
const CONFIRMATIONS = 3;
type WalletCall = { method: string; params?: unknown };

let w: X402World;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  w = await startX402World({ LOCAL_CONFIRMATIONS: String(CONFIRMATIONS) });
  browser = await launchChromium();
}, 600_000);
afterAll(async () => {
  await closeChromium(browser);
  await w?.close();
});
beforeEach(({ skip }) => requireChromium(skip));

/** The wallet in the page: every request goes to `answer` here; errors keep their EIP-1193 code. */
async function injectWallet(page: Page, answer: (call: WalletCall) => Promise<unknown>) {
  await page.exposeFunction('__testWalletRequest', async (call: WalletCall) => {
    try {
      return { result: await answer(call) };
    } catch (error) {
      return { error: { code: 4001, message: (error as Error).message } };
    }
  });
  await page.addInitScript({
    content: `window.ethereum = { request: async (call) => {
      const answered = await window.__testWalletRequest(call);
      if (answered.error) throw Object.assign(new Error(answered.error.message), answered.error);
      return answered.result;
    } };`,
  });
}

/** A wallet that starts on another chain, switches when asked, and sends with `account` on anvil. */
function anvilWallet(account: PrivateKeyAccount) {
  const calls: WalletCall[] = [];
  let current = '0x1';
  const client = createWalletClient({
    chain: w.local.walletClient.chain,
    transport: http(w.local.rpcUrl),
    account,
  });
  const answer = async (call: WalletCall): Promise<unknown> => {
    calls.push(call);
    const [param] = (call.params ?? []) as Record<string, unknown>[];
    if (call.method === 'eth_requestAccounts') return [account.address];
    if (call.method === 'eth_chainId') return current;
    if (call.method === 'wallet_switchEthereumChain') {
      current = String(param?.chainId);
      return null;
    }
    if (call.method === 'eth_sendTransaction') {
      if (current !== `0x${w.local.network.chainId.toString(16)}`) throw new Error('Wrong chain.');
      return client.sendTransaction({ to: param?.to as Hex, data: param?.data as Hex });
    }
    if (call.method === 'eth_getTransactionReceipt') {
      return w.local.publicClient.request({
        method: 'eth_getTransactionReceipt',
        params: [param as unknown as Hex],
      });
    }
    throw new Error(`Unsupported method ${call.method}.`);
  };
  return { calls, answer };
}

describe('a chain payment sent from its page', () => {
  it('sends the unsigned transfer through the injected wallet, reports it, and shows it executed after the confirmations', async () => {
    const seller = await w.seller();
    await w.local.fund(seller.address, 50n * 1_000_000n);
    // The book holds USDC on the seller's proven wallet account: moved there from another account.
    const funded = await w.h.makeAccount(seller.spaceId, {
      kind: 'bank',
      name: 'Bank',
      currency: 'USDC',
      opening_balance: '100',
    });
    const moved = await w.h.inject({
      method: 'POST',
      url: `/app/api/spaces/${seller.spaceId}/transfers`,
      session: seller.owner.token,
      payload: { from_account_id: funded.id, to_account_id: seller.account.id, amount: '40' },
    });
    expect(moved.statusCode, moved.body).toBe(201);
    const created = await w.h.inject({
      method: 'POST',
      url: `/app/api/spaces/${seller.spaceId}/payments`,
      session: seller.owner.token,
      payload: {
        account_id: seller.account.id,
        rail: 'chain',
        amount: '7.25',
        payee: 'Vendor',
        destination: DESTINATION,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const pid = created.json().id as string;

    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: 'tb_session', value: seller.owner.token, url: w.base }]);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const wallet = anvilWallet(seller.signer);
    try {
      await injectWallet(page, wallet.answer);
      await page.goto(`${w.base}/app/books/${seller.spaceId}/payments-out/${pid}`);
      const button = page.getByRole('button', { name: 'Send with wallet' });
      await button.waitFor();
      mkdirSync(RESULTS_DIR, { recursive: true });
      await page.screenshot({ path: `${RESULTS_DIR}payouts-chain-send.png`, fullPage: true });
      await button.click();
      await page.waitForURL(/\?done=chain-tx$/, { timeout: 30_000 });
      const send = wallet.calls.find((call) => call.method === 'eth_sendTransaction')!;
      const [tx] = send.params as { from: string; to: string; data: Hex; value: string }[];
      expect(tx).toMatchObject({
        from: seller.address.toLowerCase(),
        to: w.local.network.token.address,
        value: '0x0',
      });
      expect(decodeFunctionData({ abi: erc20Abi, data: tx!.data }).args).toEqual([DESTINATION, 7_250_000n]);
      expect(wallet.calls.map((call) => call.method).slice(0, 4)).toEqual([
        'eth_requestAccounts',
        'eth_chainId',
        'wallet_switchEthereumChain',
        'eth_sendTransaction',
      ]);
      expect((await page.textContent('[data-field="status"]'))?.trim()).toBe('Executing');

      // The chain follower (the housekeeping worker's step) executes it after the confirmations.
      await w.local.publicClient.request({ method: 'anvil_mine' as never, params: ['0x2'] as never });
      const deps = { db: w.h.db, clock: w.h.clock, chain: w.chain, confirmations: { local: CONFIRMATIONS } };
      await followChainPayouts(deps);
      await page.reload();
      expect((await page.textContent('[data-field="status"]'))?.trim()).toBe('Executed');
      expect(await page.locator('[data-field="entry"]').count()).toBe(1);
      await page.screenshot({ path: `${RESULTS_DIR}payouts-chain-executed.png`, fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
