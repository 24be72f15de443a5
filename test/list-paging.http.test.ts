import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertNotification } from '../src/features/notifications/index.ts';
import { createHarness, type Harness, type User } from './harness.ts';

// Every list screen pages by cursor, newest first, 50 a page: for each list fixed to do so, 51
// rows are made one after the other, and page 2 (followed from page 1's cursor in the app API and
// from its "Next page" link on the screen) holds the 51st newest, the first made, and only it.

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(() => h.close());

const cookie = (token: string) => ({ cookie: `tb_session=${token}` });
const pause = () => new Promise((resolve) => setTimeout(resolve, 3));
const label = (index: number) => `n${String(index).padStart(2, '0')}`;

/** Makes rows 0…50 in order, a few milliseconds apart, so each is newer than the one before. */
async function makeInOrder(make: (index: number) => Promise<unknown>) {
  for (let index = 0; index <= 50; index++) {
    await make(index);
    await pause();
  }
}

type Proof = {
  owner: User;
  api: string;
  screen: string;
  /** How the row made `index`-th reads in the API's items. */
  key: (item: Record<string, unknown>) => unknown;
  /** Text that only the row made `index`-th puts on the screen. */
  marker: (index: number) => string;
  /** Rows the list holds besides the 51 made (the owner among members). */
  extra?: number;
};

async function provePaging(proof: Proof, made: (index: number) => unknown) {
  const get = (url: string) => h.inject({ method: 'GET', url, session: proof.owner.token });
  const joiner = proof.api.includes('?') ? '&' : '?';
  const first = (await get(proof.api)).json();
  expect(first.items).toHaveLength(50);
  expect(first.items.map(proof.key)).toEqual(Array.from({ length: 50 }, (_, offset) => made(50 - offset)));
  expect(first.next_cursor).toEqual(expect.any(String));
  const second = (await get(`${proof.api}${joiner}cursor=${first.next_cursor}`)).json();
  expect(second.items).toHaveLength(1 + (proof.extra ?? 0));
  expect(proof.key(second.items[0])).toEqual(made(0));
  expect(second.next_cursor).toBeNull();
  expect((await get(`${proof.api}${joiner}cursor=not-ours!`)).statusCode).toBe(422);

  const page1 = await h.inject({ method: 'GET', url: proof.screen, headers: cookie(proof.owner.token) });
  expect(page1.statusCode).toBe(200);
  expect(page1.body).toContain(proof.marker(50));
  expect(page1.body).not.toContain(proof.marker(0));
  const next = /href="([^"]*cursor=[^"]*)"[^>]*>Next page/.exec(page1.body)?.[1]?.replaceAll('&amp;', '&');
  expect(next, 'page 1 links to page 2').toBeDefined();
  const page2 = await h.inject({ method: 'GET', url: next!, headers: cookie(proof.owner.token) });
  expect(page2.statusCode).toBe(200);
  expect(page2.body).toContain(proof.marker(0));
  expect(page2.body).not.toContain(proof.marker(50));
  expect(page2.body).toContain('First page');
  expect(page2.body).not.toContain('Next page');
}

describe('lists page by cursor, 50 a page, newest first: page 2 holds the 51st row', () => {
  it('Keys (revoked keys stay listed)', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    await makeInOrder(async (index) => {
      const key = await h.issueKey(owner, spaceId, { name: label(index), scopes: ['payments'] });
      const revoked = await h.inject({
        method: 'DELETE',
        url: `/app/api/spaces/${spaceId}/keys/${key.id}`,
        session: owner.token,
      });
      expect(revoked.statusCode).toBe(200);
    });
    await provePaging(
      {
        owner,
        api: `/app/api/spaces/${spaceId}/keys`,
        screen: `/app/books/${spaceId}/keys`,
        key: (item) => item.name,
        marker: (index) => `<td data-label="Name">${label(index)}</td>`,
      },
      label,
    );
  });

  it('Notifications', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const start = Date.now();
    await makeInOrder((index) =>
      insertNotification(h.db, {
        spaceId,
        userId: owner.id,
        kind: 'test.notice',
        subjectId: randomUUID(),
        payload: { tag: label(index) },
        at: new Date(start + index * 1000),
      }),
    );
    await provePaging(
      {
        owner,
        api: `/app/api/spaces/${spaceId}/notifications`,
        screen: `/app/books/${spaceId}/notifications`,
        key: (item) => (item.payload as { tag: string }).tag,
        marker: (index) => `tag: ${label(index)}<`,
      },
      label,
    );
  });

  it('Members (the owner, the oldest, follows the 51st)', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    await makeInOrder(async (index) => {
      const person = await h.signup(label(index));
      await h.addMember(owner, spaceId, person, 'viewer');
    });
    await provePaging(
      {
        owner,
        api: `/app/api/spaces/${spaceId}/members`,
        screen: `/app/books/${spaceId}/members`,
        key: (item) => item.name,
        marker: (index) => `<td data-label="Name">${label(index)}</td>`,
        extra: 1,
      },
      label,
    );
  });

  it('Books', async () => {
    const owner = await h.signup('Owner');
    await makeInOrder((index) => h.createSpace(owner, { name: label(index) }));
    await provePaging(
      {
        owner,
        api: '/app/api/spaces',
        screen: '/app/books',
        key: (item) => item.name,
        marker: (index) => `">${label(index)}</a></td>`,
      },
      label,
    );
  });

  it('Sites', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    const origin = (index: number) => `https://${label(index)}.example.com`;
    await makeInOrder(async (index) => {
      const added = await h.inject({
        method: 'POST',
        url: `/app/api/spaces/${spaceId}/sites`,
        session: owner.token,
        payload: { origin: origin(index) },
      });
      expect(added.statusCode, added.body).toBe(201);
    });
    await provePaging(
      {
        owner,
        api: `/app/api/spaces/${spaceId}/sites`,
        screen: `/app/books/${spaceId}/sites`,
        key: (item) => item.origin,
        marker: (index) => `<code>${origin(index)}</code>`,
      },
      origin,
    );
  });

  it('Accounts', async () => {
    const owner = await h.signup('Owner');
    const spaceId = await h.createSpace(owner);
    await makeInOrder((index) => h.makeAccount(spaceId, { name: label(index) }));
    await provePaging(
      {
        owner,
        api: `/app/api/spaces/${spaceId}/accounts`,
        screen: `/app/books/${spaceId}/accounts`,
        key: (item) => item.name,
        marker: (index) => `>${label(index)}<`,
      },
      label,
    );
  });

  it('Endpoints (cards)', async () => {
    const world = await h.world({ scopes: ['payments'] });
    const bank = await h.makeAccount(world.spaceId, { kind: 'bank', name: 'Bank', currency: 'USD' });
    const address = (index: number) => `https://api.example.com/${label(index)}`;
    await makeInOrder(async (index) => {
      const minted = await h.inject({
        method: 'POST',
        url: '/integration/payment-requests',
        key: world.key.key,
        payload: { account_id: bank.id, amount: '2', resource: address(index) },
      });
      expect(minted.statusCode, minted.body).toBe(201);
    });
    await provePaging(
      {
        owner: world.owner,
        api: `/app/api/spaces/${world.spaceId}/endpoints`,
        screen: `/app/books/${world.spaceId}/endpoints`,
        key: (item) => item.address,
        marker: (index) => `${address(index)}<`,
      },
      address,
    );
  });
});
