import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CatalogColumn,
  type Columns,
  catalogColumns,
  type DeclaredColumn,
  declaredColumns,
  schemaTypeProblems,
} from '../scripts/schema-types.ts';
import { PLANS } from '../src/features/spaces/domain.ts';
import { sharedDatabase } from './harness.ts';

// schema.ts is kept by hand; this keeps it true to the database the migrations make, on
// whichever database the suite runs (embedded PGlite or DATABASE_URL).

describe('src/platform/db/schema.ts against the migrated catalog', () => {
  let declared: Columns<DeclaredColumn>;
  let catalog: Columns<CatalogColumn>;

  beforeAll(async () => {
    declared = declaredColumns();
    catalog = await catalogColumns((await sharedDatabase()).db);
  }, 180_000);

  it('declares every table and column the migrations make, with their nullability, read type and listed values', () => {
    expect(catalog.size).toBeGreaterThan(50);
    expect(catalog.get('spaces')?.get('plan')?.allowed).toEqual(new Set(PLANS));
    expect(declared.get('spaces')?.get('plan')?.literals).toEqual(new Set(PLANS));
    expect(schemaTypeProblems(declared, catalog)).toEqual([]);
  });

  it('reports a missing column, a wrong nullability, a wrong type, other listed values and an unknown table', () => {
    const altered: Columns<DeclaredColumn> = new Map(
      [...declared].map(([table, columns]) => [table, new Map(columns)]),
    );
    const spaces = altered.get('spaces');
    const payouts = altered.get('payouts');
    expect(spaces?.get('name')).toEqual({ nullable: false, kinds: new Set(['string']), literals: null });
    spaces?.delete('name');
    spaces?.set('created_at', { nullable: true, kinds: new Set(['date']) });
    payouts?.set('amount', { nullable: false, kinds: new Set(['number']) });
    altered.get('webhook_subscriptions')?.set('status', {
      nullable: false,
      kinds: new Set(['string']),
      literals: new Set(['active', 'stopped']),
    });
    altered.set('ghosts', new Map());
    expect(schemaTypeProblems(altered, catalog).sort()).toEqual([
      'ghosts: declared in schema.ts, but no such table',
      'payouts.amount: numeric reads as string, schema.ts says number',
      'spaces.created_at: NOT NULL in the database, nullable in schema.ts',
      'spaces.name: a text column missing from schema.ts',
      'webhook_subscriptions.status: the CHECK allows active, paused; schema.ts says active | stopped',
    ]);
  });
});
