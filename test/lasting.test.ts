import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/platform/db/database.ts';
import { CommittedRows, readBeforeAnyWrite } from '../src/platform/db/lasting.ts';
import { sharedDatabase } from './harness.ts';

// A row is kept only from a read made before its transaction wrote anything: a row the reader
// wrote itself, even inside a savepoint that then rolls back, is never kept.

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await sharedDatabase();
  await sql`CREATE TABLE IF NOT EXISTS lasting_probe (id uuid PRIMARY KEY)`.execute(handle.db);
}, 180_000);
afterAll(async () => {
  await sql`DROP TABLE IF EXISTS lasting_probe`.execute(handle.db);
});

const readProbe = (db: DatabaseHandle['db'], id: string) =>
  sql<{
    id: string;
    lasting: boolean;
  }>`SELECT id, ${readBeforeAnyWrite} AS lasting FROM lasting_probe WHERE id = ${id}`
    .execute(db)
    .then((result) => result.rows[0]);

describe('rows kept once committed', () => {
  it('keeps a row another transaction committed, read before any write', async () => {
    const id = randomUUID();
    await sql`INSERT INTO lasting_probe (id) VALUES (${id})`.execute(handle.db);
    const kept = new CommittedRows<string>();
    await handle.db.transaction().execute(async (tx) => {
      const row = await readProbe(tx, id);
      expect(row?.lasting).toBe(true);
      kept.keep(id, row!.id, row!.lasting);
    });
    expect(kept.get(id)).toBe(id);
  });

  it('never keeps a row its reader wrote inside a savepoint that then rolled back', async () => {
    const id = randomUUID();
    const kept = new CommittedRows<string>();
    await handle.db.transaction().execute(async (tx) => {
      await sql`SAVEPOINT probe`.execute(tx);
      await sql`INSERT INTO lasting_probe (id) VALUES (${id})`.execute(tx);
      const row = await readProbe(tx, id);
      expect(row?.lasting).toBe(false);
      kept.keep(id, row!.id, row!.lasting);
      await sql`ROLLBACK TO SAVEPOINT probe`.execute(tx);
    });
    expect(kept.get(id)).toBeUndefined();
    expect(await readProbe(handle.db, id)).toBeUndefined();
  });

  it('keeps nothing read after its transaction wrote, even a row committed by another', async () => {
    const id = randomUUID();
    await sql`INSERT INTO lasting_probe (id) VALUES (${id})`.execute(handle.db);
    await handle.db.transaction().execute(async (tx) => {
      await sql`INSERT INTO lasting_probe (id) VALUES (${randomUUID()})`.execute(tx);
      expect((await readProbe(tx, id))?.lasting).toBe(false);
    });
  });
});
