import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

// The sanctions list is one per database (the current list), and on PostgreSQL every test file
// shares one database: a file that loads its own list would replace another file's list in the
// middle of that file's tests. Each such file calls this at its top: on PostgreSQL it holds a
// session advisory lock from before its first hook to after its last, so those files take turns.
// With embedded PGlite each worker has its own database and its files run one after another, so
// there is nothing to wait for.

const SCREENING_LIST_LOCK = 730_001;

export function holdScreeningList(): void {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') return;
  let client: pg.Client | undefined;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1)', [SCREENING_LIST_LOCK]);
  }, 600_000);
  afterAll(async () => {
    await client?.query('SELECT pg_advisory_unlock($1)', [SCREENING_LIST_LOCK]);
    await client?.end();
  });
}
