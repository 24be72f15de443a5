import {
  type EIP712SignedReceipt,
  extractReceiptFromResponse,
  OFFER_RECEIPT,
  verifyReceiptSignatureEIP712,
} from '@x402/extensions/offer-receipt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, encodePayment, startX402World, type X402World } from './x402-setup.ts';

// Signed receipts (the offer-receipt extension, EIP-712): a settled payment's answer carries the
// book's receipt, its signature verifies with the extension's verifier, the signer is the key
// /.well-known publishes for that book, and the receipt is kept with the payment, on its Income
// row, for download.

let w: X402World;
beforeAll(async () => {
  w = await startX402World();
});
afterAll(() => w?.close());

const json = { accept: 'application/json' };

async function signerFacts(address: string) {
  const res = await fetch(`${w.base}/.well-known/x402-receipt-signers/${address}`);
  return { status: res.status, body: (await res.json()) as Body };
}

describe('a page payment', () => {
  it("answers with a receipt the extension's verifier accepts, signed by the key /.well-known names for the book", async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const payer = await w.payer(10_000_000n);
    const res = await w.payingFetch(payer)(request.url, { headers: json });
    expect(res.status).toBe(200);
    const receipt = extractReceiptFromResponse(res) as EIP712SignedReceipt;
    expect(receipt.format).toBe('eip712');
    const verified = await verifyReceiptSignatureEIP712(receipt);
    expect(verified.payload).toMatchObject({
      version: 1,
      network: w.local.network.caip2,
      resourceUrl: request.url,
      payer: payer.address,
    });
    expect(verified.payload.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const published = await signerFacts(verified.signer);
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({ address: verified.signer.toLowerCase(), format: 'eip712' });
    const book = await w.h.db
      .selectFrom('spaces')
      .select('name')
      .where('id', '=', s.spaceId)
      .executeTakeFirst();
    expect(published.body.book).toBe(book?.name);
    expect((await signerFacts(payer.address)).status).toBe(404);
  });

  it('answers a repeat of the payment with the same receipt, and lists it on the Income row for download', async () => {
    const s = await w.seller();
    const request = await w.mint(s.key.key, '2', { account_id: s.account.id });
    const payer = await w.payer(10_000_000n);
    const quote = (await (await fetch(request.url, { headers: json })).json()) as Body;
    const payload = await w.authorize(payer, quote.accepts[0]);
    const send = () =>
      fetch(request.url, { headers: { ...json, 'payment-signature': encodePayment(payload) } });
    const first = await send();
    const again = await send();
    expect([first.status, again.status]).toEqual([200, 200]);
    const receipt = extractReceiptFromResponse(first);
    expect(extractReceiptFromResponse(again)).toEqual(receipt);

    const api = (path: string) =>
      w.h.inject({ method: 'GET', url: `/app/api/spaces/${s.spaceId}${path}`, session: s.owner.token });
    const row = (await api('/income')).json().items[0] as Body;
    const query = new URLSearchParams({ ref: row.ref, day: row.day, currency: row.currency });
    const payments = (await api(`/income/payments?${query}`)).json().items as Body[];
    expect(payments).toHaveLength(1);
    const receiptId = payments[0]!.receipt_id as string;
    expect(receiptId).toMatch(/^[0-9a-f-]{36}$/);

    const cookie = { cookie: `tb_session=${s.owner.token}` };
    const page = await w.h.inject({
      method: 'GET',
      url: `/app/books/${s.spaceId}/income/payments?${query}`,
      headers: cookie,
    });
    expect(page.body).toContain(`/app/books/${s.spaceId}/income/receipts/${receiptId}`);
    const download = await w.h.inject({
      method: 'GET',
      url: `/app/books/${s.spaceId}/income/receipts/${receiptId}`,
      headers: cookie,
    });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="x402-receipt-/);
    expect(download.json()).toEqual(receipt);
    const other = await w.seller();
    const foreign = await w.h.inject({
      method: 'GET',
      url: `/app/books/${other.spaceId}/income/receipts/${receiptId}`,
      headers: { cookie: `tb_session=${other.owner.token}` },
    });
    expect(foreign.statusCode).toBe(404);
  });
});

describe('the facilitator', () => {
  it('returns the receipt in the settle response, for the resource URL of the payload', async () => {
    const s = await w.seller();
    const payer = await w.payer(10_000_000n);
    const requirement = {
      scheme: 'exact',
      network: w.local.network.caip2,
      asset: w.token.address,
      amount: '2000000',
      payTo: s.address,
      maxTimeoutSeconds: 120,
      extra: { name: w.token.name, version: w.token.version },
    };
    const resource = {
      url: 'https://api.example.com/v1/report',
      description: 'Report',
      mimeType: 'application/json',
    };
    const payload = await w.authorize(payer, requirement, {}, resource);
    const res = await fetch(`${w.base}/x402/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirement }),
    });
    const body = (await res.json()) as Body;
    expect(body.success).toBe(true);
    const receipt = body.extensions[OFFER_RECEIPT].info.receipt as EIP712SignedReceipt;
    const verified = await verifyReceiptSignatureEIP712(receipt);
    expect(verified.payload).toMatchObject({
      resourceUrl: resource.url,
      payer: payer.address,
      transaction: body.transaction,
    });
    expect((await signerFacts(verified.signer)).status).toBe(200);
  });
});
