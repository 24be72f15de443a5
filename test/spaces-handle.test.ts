import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSpace } from '../src/features/spaces/store.ts';
import { createHarness, type Harness } from './harness.ts';

// A book's public handle ends in a random suffix; a handle another book holds is drawn again
// rather than answered 409 (books of one name share the part before the suffix).

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 300_000);
afterAll(() => h.close());

describe("a book's public handle", () => {
  it('is refused to a second book by the store, which writes nothing then', async () => {
    const owner = await h.signup('Owner');
    const first = await h.createSpace(owner, { name: 'Harbour Bakery' });
    const taken = await h.db
      .selectFrom('spaces')
      .select('public_handle')
      .where('id', '=', first)
      .executeTakeFirstOrThrow();
    const second = randomUUID();
    const written = await insertSpace(h.db, {
      id: second,
      name: 'Harbour Bakery',
      base_currency: 'USD',
      plan: 'free',
      public_handle: taken.public_handle,
      created_at: new Date(),
    });
    expect(written).toBe(false);
    const rows = await h.db.selectFrom('spaces').select('id').where('id', '=', second).execute();
    expect(rows).toEqual([]);
  });

  it('gives twenty books of one name, made at once, twenty different handles', async () => {
    const owner = await h.signup('Owner');
    const ids = await Promise.all(
      Array.from({ length: 20 }, () => h.createSpace(owner, { name: 'Same Name' })),
    );
    const handles = await h.db.selectFrom('spaces').select('public_handle').where('id', 'in', ids).execute();
    expect(new Set(handles.map((row) => row.public_handle)).size).toBe(20);
  });
});
