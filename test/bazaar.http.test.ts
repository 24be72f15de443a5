import { HTTPFacilitatorClient } from '@x402/core/server';
import {
  type DiscoveryExtension,
  extractDiscoveryInfoFromExtension,
  validateDiscoveryExtension,
  withBazaar,
} from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Body } from './chain/x402-setup.ts';
import { createHarness, type Harness } from './harness.ts';

// An endpoint card described in the bazaar form (description, HTTP method, input and output JSON
// Schemas), set through the app API and published by the public discovery list, read by the
// bazaar extension's own client and checked by its own validator.

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  base = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => h.close());

const CARD = { number: '4242424242424242', exp: '12/34', cvc: '123' };
const INPUT = {
  type: 'object',
  properties: { city: { type: 'string', description: 'A city name' } },
  required: ['city'],
};
const OUTPUT = { type: 'object', properties: { forecast: { type: 'string' } }, required: ['forecast'] };

async function card(address: string) {
  const world = await h.world({ scopes: ['payments'] });
  const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'USD bank', currency: 'USD' });
  const minted = await h.inject({
    method: 'POST',
    url: '/integration/payment-requests',
    key: world.key.key,
    payload: { account_id: bank.id, amount: '2', resource: address },
  });
  await h.inject({ method: 'POST', url: `/pay/${minted.json().token}/card`, payload: CARD });
  const listed = await h.inject({
    method: 'GET',
    url: `/app/api/spaces/${world.spaceId}/endpoints`,
    session: world.owner.token,
  });
  const id = (listed.json().items as Body[])[0]!.id as string;
  const patch = (payload: Record<string, unknown>) =>
    h.inject({
      method: 'PATCH',
      url: `/app/api/spaces/${world.spaceId}/endpoints/${id}`,
      session: world.owner.token,
      payload,
    });
  return { ...world, id, patch };
}

/** Every item of the discovery list, through the bazaar extension's own client. */
async function discovered() {
  const client = withBazaar(new HTTPFacilitatorClient({ url: `${base}/x402` }));
  const items = [];
  for (let offset = 0; ; offset += 100) {
    const page = await client.extensions.bazaar.listResources({ type: 'http', limit: 100, offset });
    items.push(...page.items);
    if (offset + 100 >= page.pagination.total) return items;
  }
}

describe('a Findable card in the bazaar form', () => {
  it('publishes its description, method and schemas; the extension validates them and reads them back', async () => {
    const address = `https://weather-${Date.now()}.example.com/v1/forecast`;
    const c = await card(address);
    const res = await c.patch({
      findable: true,
      name: 'Forecast',
      description: 'A three-day forecast for a city',
      http_method: 'POST',
      input_schema: INPUT,
      input_example: { city: 'Lisbon' },
      output_schema: OUTPUT,
      output_example: { forecast: 'Sunny, 24 °C' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      description: 'A three-day forecast for a city',
      http_method: 'POST',
      input_schema: INPUT,
      output_schema: OUTPUT,
    });
    const item = (await discovered()).find((entry) => entry.resource === address);
    expect(item).toMatchObject({
      type: 'http',
      x402Version: 2,
      description: 'A three-day forecast for a city',
    });
    const extension = item!.extensions!.bazaar as DiscoveryExtension;
    expect(validateDiscoveryExtension(extension)).toEqual({ valid: true });
    const info = extractDiscoveryInfoFromExtension(extension);
    expect(info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json' });
    expect(JSON.stringify(extension.schema)).toContain('"city"');
    expect(JSON.stringify(extension.schema)).toContain('"forecast"');
  });

  it('describes a GET endpoint by its query schema; clearing the method clears the description', async () => {
    const address = `https://lookup-${Date.now()}.example.com/v1/rate`;
    const c = await card(address);
    const set = await c.patch({
      findable: true,
      http_method: 'GET',
      input_schema: INPUT,
      input_example: { city: 'Porto' },
    });
    expect(set.statusCode, set.body).toBe(200);
    const item = (await discovered()).find((entry) => entry.resource === address);
    const extension = item!.extensions!.bazaar as DiscoveryExtension;
    expect(validateDiscoveryExtension(extension)).toEqual({ valid: true });
    expect(extractDiscoveryInfoFromExtension(extension).input).toMatchObject({ type: 'http', method: 'GET' });
    const cleared = await c.patch({ http_method: null, input_schema: null, input_example: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    const after = (await discovered()).find((entry) => entry.resource === address);
    expect(after?.extensions).toBeUndefined();
  });

  it('refuses schemas without a method and malformed fields with 422, changing nothing', async () => {
    const c = await card(`https://refused-${Date.now()}.example.com/v1/x`);
    const orphan = await c.patch({ input_schema: INPUT, input_example: { city: 'Faro' } });
    expect(orphan.statusCode).toBe(422);
    expect(orphan.json().error).toBe('invalid_request');
    const unfit = await c.patch({
      http_method: 'POST',
      input_schema: INPUT,
      input_example: { town: 'Faro' },
    });
    expect(unfit.statusCode).toBe(422);
    expect(unfit.json().detail).toContain('city');
    for (const bad of [
      { http_method: 'TRACE' },
      { input_schema: 'not a schema' },
      { output_schema: [1, 2] },
      { description: 'x'.repeat(1001) },
    ]) {
      expect((await c.patch(bad)).statusCode, JSON.stringify(bad)).toBe(422);
    }
    const listed = await h.inject({
      method: 'GET',
      url: `/app/api/spaces/${c.spaceId}/endpoints`,
      session: c.owner.token,
    });
    expect(listed.json().items[0]).toMatchObject({ http_method: null, input_schema: null, description: '' });
  });
});

describe('PATCH /integration/endpoints/{resource_id}', () => {
  it("describes the key's own card; another space's key gets 404 and no key 401", async () => {
    const address = `https://keyed-${Date.now()}.example.com/v1/quote`;
    const c = await card(address);
    const send = (key: string | undefined, payload: Record<string, unknown>) =>
      h.inject({ method: 'PATCH', url: `/integration/endpoints/${c.id}`, key, payload });
    const described = await send(c.key.key, {
      findable: true,
      description: 'A quote',
      http_method: 'GET',
      input_schema: INPUT,
      input_example: { city: 'Braga' },
    });
    expect(described.statusCode, described.body).toBe(200);
    expect(described.json()).toMatchObject({ description: 'A quote', http_method: 'GET' });
    const item = (await discovered()).find((entry) => entry.resource === address);
    expect(validateDiscoveryExtension(item!.extensions!.bazaar as DiscoveryExtension)).toEqual({
      valid: true,
    });
    const other = await h.world({ scopes: ['payments'] });
    expect((await send(other.key.key, { description: 'Not yours' })).statusCode).toBe(404);
    expect((await send(undefined, { description: 'No key' })).statusCode).toBe(401);
    expect((await send(c.key.key, { input_schema: INPUT, http_method: null })).statusCode).toBe(422);
  });
});
