// A ledger entry's row as a test writes it by SQL, past `postEntries`: for tests of what the
// database refuses and of what `tollbook ledger check` finds, which need rows no code path writes.

export type BareEntry = {
  id: string;
  spaceId: string;
  day: string;
  at: Date;
  kind?: 'transfer' | 'income';
  reverses?: string | null;
};

/** A manual entry's row with no cause, counterparty or memo. */
export function bareEntryRow(entry: BareEntry) {
  return {
    id: entry.id,
    space_id: entry.spaceId,
    origin: 'manual' as const,
    kind: entry.kind ?? ('transfer' as const),
    occurred_on: entry.day,
    cause_type: 'test',
    cause_id: null,
    counterparty: '',
    memo: '',
    reverses_entry_id: entry.reverses ?? null,
    created_at: entry.at,
  };
}
