import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonRecords } from '../src/platform/db/bulk.ts';
import { createHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('bulk rows as one JSON document', () => {
  it('reads back every value as sent: text with quotes, backslashes and emoji, nulls, exact decimals, dates, json', async () => {
    const rows = [
      {
        id: '0190f2a0-0000-7000-8000-000000000001',
        note: 'He said "hi" \\ then left 😀',
        amount: '12345678901234.12345678',
        day: '2026-02-28',
        payload: { b: 1, a: ['x', null] },
        maybe: null,
      },
      {
        id: '0190f2a0-0000-7000-8000-000000000002',
        note: '',
        amount: '-0.00000001',
        day: '2024-02-29',
        payload: { nested: { deep: 'yes' } },
        maybe: 'set',
      },
    ];
    const result = await sql<Record<string, unknown>>`
      SELECT id::text, note, amount::text, day::text, payload::text, maybe
      FROM ${jsonRecords(rows, 'r', 'id uuid, note text, amount numeric, day date, payload json, maybe text')}
      ORDER BY id`.execute(h.db);
    expect(result.rows).toEqual(rows.map((row) => ({ ...row, payload: JSON.stringify(row.payload) })));
  });

  it('puts U+FFFD where a lone surrogate stood, as a text parameter would', async () => {
    const result = await sql<{ note: string }>`
      SELECT note FROM ${jsonRecords([{ note: 'a\ud800b' }, { note: '\udc00' }], 'r', 'note text')}`.execute(
      h.db,
    );
    expect(result.rows.map((row) => row.note)).toEqual(['a\ufffdb', '\ufffd']);
  });
});
