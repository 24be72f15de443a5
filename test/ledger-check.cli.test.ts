import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAmount, formatAmount } from '../src/core/money.ts';
import { uuidv7 } from '../src/platform/crypto.ts';
import { openDatabase } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { bareEntryRow } from './ledger-rows.ts';

// `tollbook ledger check` as an operator runs it: a process whose check runs in a worker thread,
// which opens the database itself. The command prints the counts, then the problems as JSON and
// exits 1 when the ledger is unsound, or "The ledger is sound." and exits 0; a check that cannot
// finish fails on standard error with exit 1, never as sound. On PostgreSQL (DATABASE_URL) the
// books are written beside the other tests' and each check is scoped to its own book; on PGlite
// the command opens a data dir of its own, which the test closes before each run (one opener).

const databaseUrl = process.env.DATABASE_URL || undefined;
const scratch = mkdtempSync(join(tmpdir(), 'tollbook-check-cli-'));
const dataDir = join(scratch, 'data');

type Outcome = { code: number; stdout: string; stderr: string };

function ledgerCheck(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/tollbook.mjs', 'ledger', 'check', ...args],
      {
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl ?? '',
          DATA_DIR: dataDir,
          REDIS_URL: '',
          LOG_LEVEL: 'silent',
          ...env,
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

const units = (count: bigint) => formatAmount(asAmount(count * 100_000_000n));

function postingRow(spaceId: string, entryId: string, amount: bigint) {
  return {
    id: uuidv7(),
    space_id: spaceId,
    entry_id: entryId,
    ledger_account_id: uuidv7(),
    currency: 'EUR',
    amount: units(amount),
    occurred_on: '2026-01-02',
  };
}

const soundSpace = uuidv7();
const brokenSpace = uuidv7();
const emptyEntry = uuidv7();
const unbalancedEntry = uuidv7();

beforeAll(async () => {
  // The database is closed again before the command runs: embedded PGlite has one opener.
  const database = await openDatabase({ databaseUrl, dataDir });
  try {
    await migrate(database);
    await database.db.transaction().execute(async (tx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(tx);
      const balanced = uuidv7();
      const at = new Date();
      await tx
        .insertInto('ledger_entries')
        .values([
          bareEntryRow({ id: balanced, spaceId: soundSpace, day: '2026-01-02', at }),
          bareEntryRow({ id: emptyEntry, spaceId: brokenSpace, day: '2026-01-02', at }),
          bareEntryRow({ id: unbalancedEntry, spaceId: brokenSpace, day: '2026-01-02', at }),
        ])
        .execute();
      await tx
        .insertInto('ledger_postings')
        .values([
          postingRow(soundSpace, balanced, 5n),
          postingRow(soundSpace, balanced, -5n),
          postingRow(brokenSpace, unbalancedEntry, 1n),
          postingRow(brokenSpace, unbalancedEntry, 2n),
        ])
        .execute();
    });
  } finally {
    await database.close();
  }
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('tollbook ledger check', () => {
  it('prints the counts and "The ledger is sound." and exits 0 for a sound book', async () => {
    const outcome = await ledgerCheck(['--space', soundSpace]);
    expect(outcome).toEqual({
      code: 0,
      stdout: [
        'entries that do not balance: 0',
        'entries with fewer than two postings: 0',
        'cached balances that differ from their postings: 0',
        'prepaid balances below zero: 0',
        'income days that differ from their postings: 0',
        'The ledger is sound.',
        '',
      ].join('\n'),
      stderr: '',
    });
  }, 60_000);

  it('prints the counts and the problems as JSON and exits 1 for an unsound book', async () => {
    const outcome = await ledgerCheck(['--space', brokenSpace]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('');
    const [counts, json] = [
      outcome.stdout.split('\n').slice(0, 5),
      outcome.stdout.split('\n').slice(5).join('\n'),
    ];
    expect(counts).toEqual([
      'entries that do not balance: 1',
      'entries with fewer than two postings: 1',
      'cached balances that differ from their postings: 0',
      'prepaid balances below zero: 0',
      'income days that differ from their postings: 0',
    ]);
    expect(JSON.parse(json)).toEqual({
      unbalanced: [{ entry_id: unbalancedEntry, currency: 'EUR', sum: units(3n) }],
      empty: [{ id: emptyEntry }],
      drifted: [],
      overdrawn: [],
      incomeDays: [],
    });
    expect(outcome.stdout).not.toContain('The ledger is sound.');
  }, 60_000);

  it('fails with a message on standard error and exit 1 when the check cannot finish, never as sound', async () => {
    // A data dir that is a file: the worker's database cannot open, so its thread dies.
    const notADirectory = join(scratch, 'a-file');
    writeFileSync(notADirectory, '');
    const outcome = await ledgerCheck([], { DATABASE_URL: '', DATA_DIR: notADirectory });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/^tollbook: the ledger check stopped before it finished: .+\n$/);
  }, 60_000);
});
