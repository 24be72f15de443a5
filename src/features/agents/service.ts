import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { AppError } from '../../core/errors.ts';
import { SECRET_PREFIX } from '../../core/ids.ts';
import { formatAmount } from '../../core/money.ts';
import { WRITER_ROLES } from '../../core/roles.ts';
import { randomSecret, sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import type { AgentPerm, AgentStatus, AgentWriteStatus } from '../../platform/db/schema.ts';
import { requireAdministrator, requireRole } from '../spaces/index.ts';
import { type ApprovalDeps, approveWithChainIo, CHAIN_IO_KINDS, requirePending } from './approvals.ts';
import { presentCardIntent } from './card-intents.ts';
import { canMove, PROPOSAL_LIFETIME_MS } from './domain.ts';
import { isWriteKindName, WRITE_KINDS, type WriteInputs, type WriteKindName } from './kinds.ts';
import { presentFence } from './present.ts';
import * as store from './store.ts';
import { amountOf, applyProposal, type WriteCtx } from './writes.ts';

// Agents as their owners manage them in the app: issue (the oat_ token shown once, a hot wallet
// generated and sealed), list, move status, revoke; categories; proposals listed, approved (the
// person applies it) or rejected, and lapsed after seven days by a job.

/** Approving a wallet transfer or an x402 fetch asks the chain: the agent routes' own deps. */
export type AgentsDeps = ApprovalDeps;

export type AgentIssueInput = {
  name: string;
  perms: AgentPerm[];
  account_ids?: string[];
  fence: {
    x402_hosts: string[];
    allowed_merchants: string[];
    per_request_usd: number | string;
    daily_usd: number | string;
    expires_at?: string | null;
  };
};

const DISPLAY_PREFIX_LENGTH = 12;
const PROPOSALS_PAGE = 100;

export function presentAgent(row: store.AgentRow, accountIds: string[]) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    status: row.status,
    perms: row.perms,
    account_ids: accountIds,
    accounts_restricted: row.accounts_restricted,
    fence: presentFence(row),
    wallet_address: row.wallet_address,
    issuer_user_id: row.issuer_user_id,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

/** Issues an agent: the oat_ token appears in this answer only; the wallet key never leaves sealed. */
export async function issueAgent(deps: AgentsDeps, actorId: string, spaceId: string, input: AgentIssueInput) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const accountIds = input.account_ids ?? [];
  const known = await store.existingAccountIds(deps.db, spaceId, accountIds);
  const unknown = accountIds.filter((id) => !known.includes(id));
  if (unknown.length > 0) {
    throw new AppError('account_not_found', 'No account with this id in this space.', {
      account_id: unknown[0],
    });
  }
  const token = randomSecret(SECRET_PREFIX.agentKey);
  const walletKey = generatePrivateKey();
  const now = deps.clock.now();
  const row: store.AgentRow = {
    id: randomUUID(),
    space_id: spaceId,
    issuer_user_id: actorId,
    name: input.name,
    token_hash: sha256Hex(token),
    prefix: token.slice(0, DISPLAY_PREFIX_LENGTH),
    status: 'observing',
    perms: input.perms,
    accounts_restricted: input.account_ids !== undefined,
    x402_hosts: input.fence.x402_hosts.map((host) => host.toLowerCase()),
    allowed_merchants: input.fence.allowed_merchants,
    per_request_usd: formatAmount(amountOf(input.fence.per_request_usd)),
    daily_usd: formatAmount(amountOf(input.fence.daily_usd)),
    fence_expires_at: input.fence.expires_at ? new Date(input.fence.expires_at) : null,
    wallet_address: privateKeyToAccount(walletKey).address.toLowerCase(),
    wallet_key_sealed: deps.secrets.seal(walletKey),
    created_at: now,
    updated_at: now,
    revoked_at: null,
    spent_day: null,
    spent_usd: '0',
  };
  await deps.db.transaction().execute((tx) => store.insertAgent(tx, row, accountIds));
  return { ...presentAgent(row, [...accountIds].sort()), agent_id: row.id, token };
}

export async function listAgents(deps: Pick<AgentsDeps, 'db'>, actorId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, actorId);
  const rows = await store.listAgents(deps.db, spaceId);
  const accounts = await store.accountIdsOf(
    deps.db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => presentAgent(row, accounts.get(row.id) ?? []));
}

async function requireAgent(db: Db, spaceId: string, agentId: string) {
  const row = await store.findAgent(db, spaceId, agentId);
  if (!row) throw new AppError('not_found', 'No such agent in this space.');
  return row;
}

async function presentOne(db: Db, row: store.AgentRow) {
  return presentAgent(row, (await store.accountIdsOf(db, [row.id])).get(row.id) ?? []);
}

/** Moves an agent's status along the DECISIONS machine; a revoked agent cannot move. */
export async function setAgentStatus(
  deps: Pick<AgentsDeps, 'db' | 'clock'>,
  actorId: string,
  spaceId: string,
  agentId: string,
  status: AgentStatus,
) {
  await requireAdministrator(deps.db, spaceId, actorId);
  await requireAgent(deps.db, spaceId, agentId);
  await deps.db.transaction().execute(async (tx) => {
    const row = await store.lockAgent(tx, agentId);
    if (row.revoked_at !== null) throw new AppError('conflict', 'This agent was revoked.');
    if (!canMove(row.status, status)) {
      throw new AppError(
        'invalid_request',
        `An agent moves from ${row.status} to ${status} only through another status.`,
        {
          field: 'status',
          from: row.status,
        },
      );
    }
    await store.setStatus(tx, agentId, status, deps.clock.now());
  });
  return presentOne(deps.db, await requireAgent(deps.db, spaceId, agentId));
}

/** Revokes an agent: its token answers 401 from the next call on. Revoking twice answers the same. */
export async function revokeAgent(
  deps: Pick<AgentsDeps, 'db' | 'clock'>,
  actorId: string,
  spaceId: string,
  agentId: string,
) {
  await requireAdministrator(deps.db, spaceId, actorId);
  await requireAgent(deps.db, spaceId, agentId);
  await store.markRevoked(deps.db, agentId, deps.clock.now());
  return presentOne(deps.db, await requireAgent(deps.db, spaceId, agentId));
}

// ---- Proposals ----

type WriteWithAgent = store.WriteRow & { agent_name: string };

export function presentProposal(row: WriteWithAgent) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    kind: row.kind,
    input: row.input,
    message: row.message,
    status: row.status,
    result: row.result,
    decided_by: row.decided_by,
    decided_at: row.decided_at?.toISOString() ?? null,
    reject_reason: row.reject_reason,
    created_at: row.created_at.toISOString(),
  };
}

export async function listProposals(
  deps: Pick<AgentsDeps, 'db'>,
  actorId: string,
  spaceId: string,
  status: AgentWriteStatus | undefined = 'pending',
) {
  await requireRole(deps.db, spaceId, actorId);
  const rows = await store.listWrites(deps.db, spaceId, { status, limit: PROPOSALS_PAGE });
  return rows.map(presentProposal);
}

/** A person approves: the proposal applies with them as actor, and its answer is the result. */
export async function approveProposal(
  deps: AgentsDeps,
  actorId: string,
  spaceId: string,
  proposalId: string,
) {
  await requireAdministrator(deps.db, spaceId, actorId);
  const seen = requirePending(await store.findWrite(deps.db, spaceId, proposalId));
  if (CHAIN_IO_KINDS.has(seen.kind)) {
    await approveWithChainIo(deps, { actorId, spaceId, proposalId }, seen);
    return presentProposal(await store.findWriteWithAgent(deps.db, spaceId, proposalId));
  }
  await deps.db.transaction().execute(async (tx) => {
    const write = requirePending(await store.lockWrite(tx, spaceId, proposalId));
    const agent = await store.lockAgent(tx, write.agent_id);
    if (agent.revoked_at !== null) {
      throw new AppError('conflict', 'This agent was revoked: its proposals can only be rejected.');
    }
    const accountIds = agent.accounts_restricted
      ? ((await store.accountIdsOf(tx, [agent.id])).get(agent.id) ?? [])
      : null;
    if (!isWriteKindName(write.kind)) {
      throw new AppError('proposal_state', `A ${write.kind} proposal cannot be applied here.`);
    }
    const now = deps.clock.now();
    const ctx = { tx, deps, agent, accountIds, now };
    const applied = await applyStored(ctx, write.kind, write.input, { actorId, writeId: write.id });
    await store.decideWrite(tx, write.id, {
      status: 'approved',
      by: actorId,
      at: now,
      result: applied.result,
    });
  });
  return presentProposal(await store.findWriteWithAgent(deps.db, spaceId, proposalId));
}

/**
 * Applies a stored proposal with its own kind's rules. The row's input is what that kind's route
 * accepted (its body schema) and runAgentWrite stored as JSON; applyProposal checks it again.
 */
function applyStored<K extends WriteKindName>(
  ctx: WriteCtx,
  kind: K,
  stored: Record<string, unknown>,
  by: { actorId: string; writeId: string },
) {
  const input = stored as WriteInputs[K];
  return applyProposal(ctx, WRITE_KINDS[kind], input, by.actorId, by.writeId);
}

export async function rejectProposal(
  deps: Pick<AgentsDeps, 'db' | 'clock'>,
  actorId: string,
  spaceId: string,
  proposalId: string,
  reason: string,
) {
  await requireAdministrator(deps.db, spaceId, actorId);
  await deps.db.transaction().execute(async (tx) => {
    const write = requirePending(await store.lockWrite(tx, spaceId, proposalId));
    await store.decideWrite(tx, write.id, {
      status: 'rejected',
      by: actorId,
      at: deps.clock.now(),
      rejectReason: reason,
    });
  });
  return presentProposal(await store.findWriteWithAgent(deps.db, spaceId, proposalId));
}

/** Job: proposals nobody decided within seven days lapse. Answers how many lapsed. */
export async function lapseProposals(
  deps: Pick<AgentsDeps, 'db' | 'clock'>,
  batchSize = 100,
): Promise<number> {
  const now = deps.clock.now();
  const before = new Date(now.getTime() - PROPOSAL_LIFETIME_MS);
  return deps.db.transaction().execute(async (tx) => {
    const due = await store.claimLapsing(tx, before, batchSize);
    for (const write of due) await store.decideWrite(tx, write.id, { status: 'lapsed', by: null, at: now });
    return due.length;
  });
}

// ---- Categories ----

export async function listCategories(deps: Pick<AgentsDeps, 'db'>, actorId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, actorId);
  return (await store.listCategories(deps.db, spaceId)).map(presentCategory);
}

function presentCategory(row: store.CategoryRow) {
  return { id: row.id, name: row.name, kind: row.kind, created_at: row.created_at.toISOString() };
}

/** Adds a category; the same name and kind again answers the existing one. */
export async function createCategory(
  deps: Pick<AgentsDeps, 'db' | 'clock'>,
  actorId: string,
  spaceId: string,
  input: { name: string; kind: 'income' | 'expense' | 'transfer' },
) {
  await requireRole(deps.db, spaceId, actorId, WRITER_ROLES);
  const name = input.name.trim();
  const inserted = await store.insertCategory(deps.db, {
    id: randomUUID(),
    space_id: spaceId,
    name,
    kind: input.kind,
    created_at: deps.clock.now(),
  });
  return presentCategory(inserted ?? (await store.findCategoryByName(deps.db, spaceId, input.kind, name)));
}

// ---- Card intents ----

export async function listCardIntents(deps: Pick<AgentsDeps, 'db'>, actorId: string, spaceId: string) {
  await requireRole(deps.db, spaceId, actorId);
  return (await store.listCardIntents(deps.db, spaceId)).map(presentCardIntent);
}
