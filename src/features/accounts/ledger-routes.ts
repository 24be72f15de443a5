import type { FastifyInstance } from 'fastify';
import { APP_READ_ERRORS, routeDoc } from '../../platform/http/openapi.ts';
import { DateOnly, Type } from '../../platform/http/schema-kit.ts';
import { requireCaller, typedRoutes } from '../../platform/http/typed.ts';
import { type LedgerReadsDeps, listLedgerEntries, readLedgerEntry } from './ledger-reads.ts';

const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const EntryParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  entry_id: Type.String({ format: 'uuid' }),
});
const EntriesQuery = Type.Object(
  {
    account_id: Type.Optional(Type.String({ format: 'uuid', description: 'Entries moving this account.' })),
    from: Type.Optional(DateOnly({ description: 'Occurred on or after this day.' })),
    to: Type.Optional(DateOnly({ description: 'Occurred on or before this day.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
    limit: Type.Optional(
      Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1 to 100; default 50.' }),
    ),
  },
  { additionalProperties: false },
);
const PostingOut = Type.Object({
  ledger_account_id: Type.String({ format: 'uuid' }),
  account_kind: Type.String(),
  account_ref: Type.String(),
  currency: Type.String(),
  amount: Type.String({ description: 'Signed: debits positive, credits negative.' }),
});
const EntryOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  occurred_on: Type.String(),
  origin: Type.String(),
  kind: Type.String(),
  cause_type: Type.String(),
  cause_id: Type.Union([Type.String(), Type.Null()]),
  counterparty: Type.String(),
  memo: Type.String(),
  reverses_entry_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  postings: Type.Array(PostingOut),
});
const EntryList = Type.Object({
  items: Type.Array(EntryOut),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** The OpenAPI description of each route below (see platform/http/openapi.ts). */
const docs = {
  listLedgerEntries: routeDoc({
    operationId: 'listLedgerEntries',
    summary: 'List ledger entries',
    description:
      'Lists the space’s ledger entries with their postings to any member, the newest filed first, 50 a page by default (limit 1 to 100). account_id keeps the entries that move one of the space’s accounts (another id is refused with account_not_found); from and to bound the day they occurred, and from may not be after to. Send next_cursor back as cursor for the next page.',
    tags: ['Ledger'],
    errors: APP_READ_ERRORS,
  }),
  getLedgerEntry: routeDoc({
    operationId: 'getLedgerEntry',
    summary: 'Read a ledger entry',
    description:
      'Answers one ledger entry of the space with its postings (debits positive, credits negative) to any member; the entry it reverses, if it is a reversal, is named. Another space’s entry is not found.',
    tags: ['Ledger'],
    errors: APP_READ_ERRORS,
  }),
};

/** The Ledger screen's data: entries with their postings, newest filed first. */
export function registerLedgerAppRoutes(server: FastifyInstance, deps: LedgerReadsDeps) {
  const app = typedRoutes(server);
  app.get(
    '/app/api/spaces/:id/ledger/entries',
    {
      schema: {
        ...docs.listLedgerEntries,
        params: SpaceParams,
        querystring: EntriesQuery,
        response: { 200: EntryList },
      },
    },
    async (request) => {
      const { id } = request.params;
      const query = request.query;
      return listLedgerEntries(deps, requireCaller(request).userId, id, {
        accountId: query.account_id,
        from: query.from,
        to: query.to,
        cursor: query.cursor,
        limit: query.limit === undefined ? undefined : Number(query.limit),
      });
    },
  );
  app.get(
    '/app/api/spaces/:id/ledger/entries/:entry_id',
    { schema: { ...docs.getLedgerEntry, params: EntryParams, response: { 200: EntryOut } } },
    async (request) => {
      const { id, entry_id } = request.params;
      return readLedgerEntry(deps, requireCaller(request).userId, id, entry_id);
    },
  );
}
