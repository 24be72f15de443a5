import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledOnce, type QueryArg } from '../src/platform/db/compiled-once.ts';
import type { Queryable } from '../src/platform/db/database.ts';
import { createHarness, type Harness } from './harness.ts';

// A query built and compiled once per shape must still send each call's own values, keep the
// constants its build wrote, and keep its shapes apart.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h.close());

type Args = { id: string };
const spaceOfPlan = compiledOnce((db: Queryable, arg: QueryArg<Args>, shape: 'pro' | 'scale') =>
  db.selectFrom('spaces').select(['id', 'plan']).where('id', '=', arg('id')).where('plan', '=', shape),
);

describe('a query compiled once', () => {
  it('sends each call’s values, keeps the constants of its shape, and keeps shapes apart', async () => {
    const owner = await h.signup();
    const pro = await h.createSpace(owner, { plan: 'pro' });
    const other = await h.createSpace(owner, { plan: 'pro' });
    const scale = await h.createSpace(owner, { plan: 'scale' });
    expect(await spaceOfPlan(h.db, { id: pro }, 'pro')).toEqual([{ id: pro, plan: 'pro' }]);
    expect(await spaceOfPlan(h.db, { id: other }, 'pro')).toEqual([{ id: other, plan: 'pro' }]);
    expect(await spaceOfPlan(h.db, { id: scale }, 'pro')).toEqual([]);
    expect(await spaceOfPlan(h.db, { id: scale }, 'scale')).toEqual([{ id: scale, plan: 'scale' }]);
    expect(await spaceOfPlan(h.db, { id: pro }, 'scale')).toEqual([]);
  });
});
