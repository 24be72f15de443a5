import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

// On PostgreSQL every test file shares one database, and some things in it are one per database:
// - the sanctions list (the current list): a file that loads its own list would replace another
//   file's list in the middle of that file's tests;
// - the chain payments on the network named "local": each file starts its own anvil under that
//   name, and a file's chain follower reads every file's payments on it. Another file's
//   transaction is absent from this file's chain, which is what a reorg looks like, so one
//   file's follower would undo another file's payment;
// - the mail outbox: a file that drains it sends every file's queued mail to its own SMTP sink.
// Each such file calls the matching function at its top: on PostgreSQL it holds a session
// advisory lock from before its first hook to after its last, so those files take turns. With
// embedded PGlite each worker has its own database and its files run one after another, so there
// is nothing to wait for.

const TURNS = { screeningList: 730_001, localChainPayouts: 730_002, mailOutbox: 730_003 } as const;

function holdTurn(lock: number): void {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') return;
  let client: pg.Client | undefined;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1)', [lock]);
  }, 600_000);
  afterAll(async () => {
    await client?.query('SELECT pg_advisory_unlock($1)', [lock]);
    await client?.end();
  });
}

/** For a file that loads its own sanctions list. */
export function holdScreeningList(): void {
  holdTurn(TURNS.screeningList);
}

/** For a file that follows chain payments on its own anvil. */
export function holdLocalChainPayouts(): void {
  holdTurn(TURNS.localChainPayouts);
}

/** For a file that drains the mail outbox. */
export function holdMailOutbox(): void {
  holdTurn(TURNS.mailOutbox);
}
