import type { FastifyInstance } from 'fastify';
import { createWalletClient, decodeFunctionData, erc20Abi, type Hex, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followChainPayouts } from '../../src/features/payouts/index.ts';
import type { Chain } from '../../src/platform/chain/chain.ts';
import { createHarness, type Harness } from '../harness.ts';
import { type Book, expectEventBody, makeBook } from '../payouts-setup.ts';
import { holdLocalChainPayouts } from '../support/turns.ts';
import { buildChainApp, startTestChain } from './chain-setup.ts';

holdLocalChainPayouts();

// The chain rail on anvil: the unsigned transfer is signed and sent by a viem account (as a
// browser wallet would), reported with POST …/chain-tx, and executed after the confirmations.

let chain: Chain;
let app: FastifyInstance;
let h: Harness;
let b: Book;
let wallet: { id: string };
const signer = privateKeyToAccount(generatePrivateKey());
const DESTINATION = '0x000000000000000000000000000000000000bEEF';

beforeAll(async () => {
  chain = await startTestChain();
  app = await buildChainApp(chain, { LOCAL_CONFIRMATIONS: '3' });
  h = await createHarness();
  b = await makeBook(h);
  wallet = await h.makeAccount(b.spaceId, {
    kind: 'crypto',
    name: 'Treasury',
    currency: 'USDC',
    network: 'local',
    address: signer.address,
    opening_balance: '100',
  });
  const url = `/app/api/spaces/${b.spaceId}/accounts/${wallet.id}/address-proof`;
  const challenge = await h.inject({ method: 'POST', url, session: b.owner.token, payload: {} });
  const signature = await signer.signMessage({ message: challenge.json().message });
  const proven = await h.inject({ method: 'POST', url, session: b.owner.token, payload: { signature } });
  expect(proven.statusCode).toBe(200);
  await chain.local!.fund(signer.address, 100n * 1_000_000n);
}, 120_000);
afterAll(async () => {
  await b?.ledgerSound();
  await app?.close();
  await h?.close();
  await chain?.close();
});

const call = (method: 'GET' | 'POST', path: string, payload?: Record<string, unknown>) =>
  app.inject({
    method,
    url: `/app/api/spaces/${b.spaceId}${path}`,
    headers: { authorization: `Bearer ${b.owner.token}` },
    ...(payload ? { payload } : {}),
  });

async function send(tx: { to: string; data: string; chain_id: number }) {
  const walletClient = createWalletClient({
    chain: chain.local!.walletClient.chain,
    transport: http(chain.local!.rpcUrl),
    account: signer,
  });
  const hash = await walletClient.sendTransaction({ to: tx.to as Hex, data: tx.data as Hex });
  const receipt = await chain.local!.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return hash;
}

describe('chain payments', () => {
  it('gives the unsigned transfer, refuses a wrong transaction, executes after the confirmations', async () => {
    const payment = (
      await call('POST', '/payments', {
        account_id: wallet.id,
        rail: 'chain',
        amount: '12.5',
        payee: 'Vendor',
        destination: DESTINATION,
      })
    ).json();
    expect(payment).toMatchObject({ status: 'executing', destination: DESTINATION.toLowerCase() });
    const tx = (await call('GET', `/payments/${payment.id}/transaction`)).json();
    expect(tx).toMatchObject({
      chain_id: 31337,
      from: signer.address.toLowerCase(),
      to: chain.local!.network.token.address,
      value: '0x0',
    });
    const decoded = decodeFunctionData({ abi: erc20Abi, data: tx.data });
    expect(decoded).toEqual({ functionName: 'transfer', args: [DESTINATION, 12_500_000n] });

    // A transfer of another amount is not this payment.
    const wrong = await send({ ...tx, data: tx.data.replace(/bebc20$/, '989680') });
    const refused = await call('POST', `/payments/${payment.id}/chain-tx`, { tx_hash: wrong });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ error: 'invalid_request', details: { field: 'tx_hash' } });

    const hash = await send(tx);
    const early = (await call('POST', `/payments/${payment.id}/chain-tx`, { tx_hash: hash })).json();
    expect(early).toMatchObject({ status: 'executing', tx_hash: hash.toLowerCase(), transaction_id: null });
    await chain.local!.publicClient.request({ method: 'anvil_mine' as never, params: ['0x2'] as never });
    const done = (await call('POST', `/payments/${payment.id}/chain-tx`, { tx_hash: hash })).json();
    expect(done).toMatchObject({ status: 'executed', tx_hash: hash.toLowerCase() });
    expect(await b.balance(wallet.id)).toBe('87.50000000');
    const executed = (await b.events('payout.executed')).find((e) => e.payload.payment_id === payment.id)!;
    expectEventBody(executed.payload, {
      payment_id: payment.id,
      amount: '12.50000000',
      currency: 'USDC',
      rail: 'local',
      transaction_id: done.transaction_id,
    });
    const out = (await b.events('money.out')).find((e) => e.payload.transaction_id === done.transaction_id)!;
    expect(out.payload).toMatchObject({ origin: 'rail', direction: 'out', amount: '12.50000000' });
    expect(JSON.stringify(out.payload)).not.toContain('beef');
    // Reported again: answered as it is, booked once.
    expect((await call('POST', `/payments/${payment.id}/chain-tx`, { tx_hash: hash })).json().status).toBe(
      'executed',
    );
    expect(await b.balance(wallet.id)).toBe('87.50000000');
  }, 120_000);

  it('a reorganisation that removes the transfer moves the payment back to executing and reverses the entry; seen again, it executes', async () => {
    const deps = { db: h.db, clock: h.clock, chain, confirmations: { local: 3 } };
    const payment = (
      await call('POST', '/payments', {
        account_id: wallet.id,
        rail: 'chain',
        amount: '5',
        payee: 'Vendor',
        destination: DESTINATION,
      })
    ).json();
    const tx = (await call('GET', `/payments/${payment.id}/transaction`)).json();
    const walletClient = createWalletClient({
      chain: chain.local!.walletClient.chain,
      transport: http(chain.local!.rpcUrl),
      account: signer,
    });
    const request = await walletClient.prepareTransactionRequest({ to: tx.to as Hex, data: tx.data as Hex });
    const raw = await walletClient.signTransaction(request);
    const hash = await chain.local!.publicClient.sendRawTransaction({ serializedTransaction: raw });
    await chain.local!.publicClient.waitForTransactionReceipt({ hash });
    expect((await call('POST', `/payments/${payment.id}/chain-tx`, { tx_hash: hash })).json().status).toBe(
      'executing',
    );
    await chain.local!.publicClient.request({ method: 'anvil_mine' as never, params: ['0x2'] as never });
    // The worker sees the confirmations (nobody reports the transaction again).
    // The rounds' totals are not read: the shared test database holds other files' payments too.
    await followChainPayouts(deps);
    const executed = (await call('GET', `/payments/${payment.id}`)).json();
    expect(executed.status).toBe('executed');
    expect(await b.balance(wallet.id)).toBe('82.50000000');

    // anvil_reorg replaces the last three blocks (the transfer's and the two mined after) with empty ones.
    await chain.local!.publicClient.request({ method: 'anvil_reorg' as never, params: [3, []] as never });
    // Undone on evidence seen twice: a round that marks it, a block, a round that reverses it.
    await followChainPayouts(deps);
    expect((await call('GET', `/payments/${payment.id}`)).json().status).toBe('executed');
    await chain.local!.publicClient.request({ method: 'anvil_mine' as never, params: ['0x1'] as never });
    await followChainPayouts(deps);
    const back = (await call('GET', `/payments/${payment.id}`)).json();
    expect(back).toMatchObject({ status: 'executing', transaction_id: null, tx_hash: hash.toLowerCase() });
    expect(await b.balance(wallet.id)).toBe('87.50000000');
    const reversal = await h.db
      .selectFrom('ledger_entries')
      .select('reverses_entry_id')
      .where('space_id', '=', b.spaceId)
      .where('reverses_entry_id', '=', executed.transaction_id)
      .execute();
    expect(reversal).toHaveLength(1);

    // The same signed transaction is broadcast again and mined: seen again, executed again.
    await chain.local!.publicClient.sendRawTransaction({ serializedTransaction: raw }).catch(() => undefined);
    await chain.local!.publicClient.request({ method: 'anvil_mine' as never, params: ['0x3'] as never });
    await followChainPayouts(deps);
    const again = (await call('GET', `/payments/${payment.id}`)).json();
    expect(again.status).toBe('executed');
    expect(again.transaction_id).not.toBe(executed.transaction_id);
    expect(await b.balance(wallet.id)).toBe('82.50000000');
  }, 120_000);
});
