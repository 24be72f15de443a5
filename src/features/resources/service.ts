import { defined } from '../../core/assert.ts';
import type { Clock } from '../../core/clock.ts';
import { PAGE_SIZE, pageOf, readCursor } from '../../core/cursor.ts';
import { AppError } from '../../core/errors.ts';
import type { Db, Queryable } from '../../platform/db/database.ts';
import { CommittedRows } from '../../platform/db/lasting.ts';
import { incomeRowEntries, incomeRows, type PageInput } from '../ledger/index.ts';
import { receiptsOfEntries } from '../receipts/index.ts';
import { flaggedEntries, flaggedIncomeRows } from '../screening/index.ts';
import { requireAdministrator, requireRole } from '../spaces/index.ts';
import { bazaarProblem } from './bazaar.ts';
import { chartDays, dailySeries } from './domain.ts';
import * as store from './store.ts';

export type ResourcesDeps = { db: Db; clock: Clock };

// An endpoint's id never changes for its (space, address), a unique key, and endpoints are never
// deleted: once read from a committed row it is kept (see platform/db/lasting.ts).
const lastingResources = new CommittedRows<string>();

/**
 * Files a payment or a charge under the endpoint it paid for: the address creates the card the
 * first time. An empty address files nothing. (The card's updated_at is the time it was last
 * edited; a call is not an edit, and its figures come from the settlements and charges.)
 */
export async function fileResource(
  db: Queryable,
  spaceId: string,
  address: string | undefined,
  at: Date,
): Promise<string | null> {
  if (address === undefined || address === '') return null;
  const key = `${spaceId}|${address}`;
  const known = lastingResources.get(key);
  if (known) return known;
  const filed = await store.upsertResource(db, spaceId, address, at);
  lastingResources.keep(key, filed.id, filed.lasting);
  return filed.id;
}

export function getResource(db: Queryable, spaceId: string, resourceId: string) {
  return store.findResource(db, spaceId, resourceId);
}

function presentCard(row: store.CardRow, payers: { date: string; payers: number }[]) {
  return {
    id: row.id,
    address: row.address,
    name: row.name,
    findable: row.findable,
    description: row.description,
    http_method: row.http_method,
    input_schema: row.input_schema,
    input_example: row.input_example,
    output_schema: row.output_schema,
    output_example: row.output_example,
    call_count: Number(row.call_count),
    last_payment_at: row.last_payment_at?.toISOString() ?? null,
    payers_per_day: payers,
    created_at: row.created_at.toISOString(),
  };
}

async function cards(deps: ResourcesDeps, spaceId: string, which: Parameters<typeof store.listCards>[2]) {
  const now = deps.clock.now();
  const rows = await store.listCards(deps.db, spaceId, which);
  const ids = rows.map((row) => row.id);
  const days = chartDays(now);
  const counts = await store.payersPerDay(deps.db, spaceId, days, ids);
  const byResource = new Map<string, Map<string, number>>();
  for (const count of counts) {
    const days = byResource.get(count.resource_id) ?? new Map<string, number>();
    days.set(count.day, Number(count.payers));
    byResource.set(count.resource_id, days);
  }
  return rows.map((row) => presentCard(row, dailySeries(days, byResource.get(row.id) ?? new Map())));
}

/** The Endpoints screen: every card of the space, with its figures (any member may look). */
export async function listEndpoints(
  deps: ResourcesDeps,
  userId: string,
  spaceId: string,
  query: { cursor?: string | undefined } = {},
) {
  await requireRole(deps.db, spaceId, userId);
  const before = readCursor(query.cursor);
  const rows = await cards(deps, spaceId, { before, limit: PAGE_SIZE + 1 });
  const page = pageOf(rows, (card) => ({ at: new Date(card.created_at), id: card.id }));
  return { items: page.items, next_cursor: page.next_cursor };
}

/**
 * Renames a card, marks it Findable, or describes it for the bazaar discovery list (owners and
 * admins). The description as it would stand must pass the bazaar extension's validator.
 */
export async function updateEndpoint(
  deps: ResourcesDeps,
  userId: string,
  spaceId: string,
  resourceId: string,
  change: store.CardChange,
) {
  await requireAdministrator(deps.db, spaceId, userId);
  return changeCard(deps, spaceId, resourceId, change);
}

/** The same change through an integration key of the space (its `payments` scope allows it). */
export function updateEndpointByKey(
  deps: ResourcesDeps,
  caller: { spaceId: string },
  resourceId: string,
  change: store.CardChange,
) {
  return changeCard(deps, caller.spaceId, resourceId, change);
}

async function changeCard(
  deps: ResourcesDeps,
  spaceId: string,
  resourceId: string,
  change: store.CardChange,
) {
  const [current] = await store.listCards(deps.db, spaceId, { resourceId });
  if (!current) throw new AppError('not_found', 'No such endpoint in this space.');
  const problem = bazaarProblem({
    http_method: change.http_method === undefined ? current.http_method : change.http_method,
    input_schema: change.input_schema === undefined ? current.input_schema : change.input_schema,
    input_example: change.input_example === undefined ? current.input_example : change.input_example,
    output_schema: change.output_schema === undefined ? current.output_schema : change.output_schema,
    output_example: change.output_example === undefined ? current.output_example : change.output_example,
  });
  if (problem) throw new AppError('invalid_request', `The bazaar description is not valid: ${problem}`);
  if (!(await store.updateCard(deps.db, spaceId, resourceId, change, deps.clock.now())))
    throw new AppError('not_found', 'No such endpoint in this space.');
  const [card] = await cards(deps, spaceId, { resourceId });
  return defined(card, 'the endpoint just updated');
}

/** The public discovery list's page: Findable cards' address, name, bazaar description and creation, nothing else. */
export function listDiscoverable(db: Queryable, limit: number, offset: number) {
  return store.listFindable(db, limit, offset);
}

const INCOME_REF = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Labels for income rows: an endpoint's address (or name), else what the account is for. */
async function labelsFor(db: Queryable, spaceId: string, refs: string[]) {
  const ids = [...new Set(refs.filter((ref) => INCOME_REF.test(ref)))];
  const rows = await store.resourceLabels(db, spaceId, ids);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return (ref: string) => {
    const resource = byId.get(ref);
    if (resource)
      return { resource_id: ref, label: resource.name || resource.address, address: resource.address };
    if (ref === 'general') return { resource_id: null, label: 'Other income', address: null };
    return {
      resource_id: null,
      label: ref.startsWith('import:') ? `Imported: ${ref.slice(7)}` : ref,
      address: null,
    };
  };
}

/** The Income screen: a row per endpoint per day (any member), newest day first. */
export async function listIncome(
  deps: ResourcesDeps,
  userId: string,
  spaceId: string,
  filter: PageInput & { ref?: string | undefined },
) {
  await requireRole(deps.db, spaceId, userId);
  const page = await incomeRows(deps.db, spaceId, filter);
  const label = await labelsFor(
    deps.db,
    spaceId,
    page.items.map((row) => row.ref),
  );
  const flagged = await flaggedIncomeRows(
    deps.db,
    spaceId,
    page.items.map((row) => row.day),
  );
  return {
    items: page.items.map((row) => ({
      ...row,
      ...label(row.ref),
      listed_senders: flagged.get(`${row.ref}|${row.day}|${row.currency}`) ?? 0,
    })),
    next_cursor: page.next_cursor,
  };
}

/** The payments under one income row, each with its payer and its ledger entry. */
export async function listIncomePayments(
  deps: ResourcesDeps,
  userId: string,
  spaceId: string,
  row: { ref: string; currency: string; day: string },
  page: PageInput,
) {
  await requireRole(deps.db, spaceId, userId);
  const entries = await incomeRowEntries(deps.db, spaceId, row, page);
  const entryIds = entries.items.map((entry) => entry.entry_id);
  const flags = await flaggedEntries(deps.db, spaceId, entryIds);
  const receipts = await receiptsOfEntries(deps.db, spaceId, entryIds);
  return {
    items: entries.items.map((entry) => {
      const flag = flags.get(entry.entry_id);
      return {
        ...entry,
        listed_sender: flag ? { listed: flag.listed, programs: flag.programs } : null,
        receipt_id: receipts.get(entry.entry_id) ?? null,
      };
    }),
    next_cursor: entries.next_cursor,
  };
}
