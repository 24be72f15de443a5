import { Type } from '../../platform/http/schema-kit.ts';
import { ROWS_PER_PUSH_MAX } from './domain.ts';

const ROW_DESCRIPTION =
  'A pushed row: external_id (1–128, required), account_key (1–120, required; an unknown key creates an account), ' +
  'currency (2–12), occurred_on (YYYY-MM-DD), amount (signed decimal; negative is money out), payee (≤200), note (≤500). ' +
  'Each row is validated on its own: a bad row is rejected with its reason in errors[] while the good rows book.';

export const PushIn = Type.Object(
  {
    rows: Type.Array(Type.Unknown({ description: ROW_DESCRIPTION }), {
      maxItems: ROWS_PER_PUSH_MAX,
      description: 'At most 500 rows; one call is one batch.',
    }),
  },
  { $id: 'PushIn', title: 'PushIn' },
);

export const PushOut = Type.Object(
  {
    batch_id: Type.String({ format: 'uuid' }),
    booked: Type.Integer(),
    duplicates: Type.Integer({
      description: 'Rows whose external_id this source had filed already (or repeated in this batch).',
    }),
    skipped_closed: Type.Integer({ description: 'Rows dated inside the closed books, never filed.' }),
    rejected: Type.Integer(),
    accounts_created: Type.Array(Type.String(), { description: 'Account keys that created an account.' }),
    errors: Type.Array(
      Type.Object({
        index: Type.Integer(),
        external_id: Type.Union([Type.String(), Type.Null()]),
        error: Type.String({ description: 'invalid_row, currency_mismatch or allowance_exceeded' }),
        detail: Type.String(),
      }),
    ),
  },
  { $id: 'PushOut', title: 'PushOut' },
);

export const BatchOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  push_source: Type.String(),
  status: Type.String({ description: 'booked or undone' }),
  rows_total: Type.Integer(),
  booked: Type.Integer(),
  duplicates: Type.Integer(),
  skipped_closed: Type.Integer(),
  rejected: Type.Integer(),
  accounts_created: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  undone_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const BatchPage = Type.Object({
  items: Type.Array(BatchOut),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as cursor for the next 50; null on the last page.',
  }),
});

export const RejectionOut = Type.Object({
  index: Type.Integer({ description: "The row's place in the pushed array, from 0." }),
  external_id: Type.Union([Type.String(), Type.Null()]),
  error: Type.String({ description: 'invalid_row, currency_mismatch or allowance_exceeded' }),
  detail: Type.String(),
});

export const RejectionsOut = Type.Object({
  batch: BatchOut,
  items: Type.Array(RejectionOut, {
    description:
      'Every row the batch refused, in pushed order (at most 500). Batches pushed before reasons were kept list none.',
  }),
});

export const UndoOut = Type.Object({
  batch_id: Type.String({ format: 'uuid' }),
  status: Type.String(),
  reversed: Type.Integer(),
  undone_at: Type.String({ format: 'date-time' }),
});
