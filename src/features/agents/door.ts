import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { hasSecretShape, SECRET_PREFIX } from '../../core/ids.ts';
import { canAdminister } from '../../core/roles.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import type { RateDecision, RateLimiter } from '../../platform/http/rate-limit.ts';
import { mask } from './domain.ts';
import { presentFence } from './present.ts';
import * as store from './store.ts';
import type { AgentCaller } from './writes.ts';

// The door of /agent: `Authorization: Bearer oat_…`. The token is read live by its hash on
// every call, so a revocation or a status change stops the very next call. An agent whose
// issuer is no longer an owner or admin of its space is refused like an unknown token.

const UNAUTHORIZED = 'The agent token is unknown or revoked, or its issuer can no longer issue agents.';

export type AgentDoorDeps = { db: Db; clock: Clock; limiter: RateLimiter };
export type AgentAdmission = { caller: AgentCaller; principal: store.AgentPrincipal; rate: RateDecision };

export function createAgentDoor(deps: AgentDoorDeps) {
  async function admit(authorization: string | undefined): Promise<AgentAdmission> {
    if (!authorization)
      throw new AppError('unauthorized', 'Send the agent token as Authorization: Bearer oat_….');
    const token = authorization.startsWith('Bearer ') ? authorization.slice(7).trim() : '';
    if (!hasSecretShape(token, SECRET_PREFIX.agentKey)) throw new AppError('unauthorized', UNAUTHORIZED);
    const row = await store.agentByTokenHash(deps.db, sha256Hex(token));
    if (!row || row.revoked_at !== null) throw new AppError('unauthorized', UNAUTHORIZED);
    // A live agent's every call counts, refused ones too.
    const { decision } = await deps.limiter.hit({ keyId: row.id });
    const { account_ids: restrictedTo, ...principal } = row;
    if (principal.issuer_role === null || !canAdminister(principal.issuer_role)) {
      throw new AppError('unauthorized', UNAUTHORIZED);
    }
    if (!decision.allowed) {
      throw new AppError(
        'rate_limited',
        `More than ${decision.limit} calls in a minute by this agent; retry after the wait.`,
        {
          retry_after_seconds: decision.resetSeconds,
          limit: decision.limit,
        },
      );
    }
    const accountIds = principal.accounts_restricted ? (restrictedTo ?? []) : null;
    const caller: AgentCaller = {
      agentId: principal.id,
      spaceId: principal.space_id,
      issuerUserId: principal.issuer_user_id,
      accountIds,
    };
    return { caller, principal, rate: decision };
  }
  return { admit };
}

export type AgentDoor = ReturnType<typeof createAgentDoor>;

/** AgentMeOut: who the agent is and what it may touch, with numbers and addresses masked. */
export async function describeAgent(db: Db, admission: AgentAdmission) {
  const { principal, caller } = admission;
  const accounts = (await store.spaceAccounts(db, principal.space_id)).filter(
    (account) => caller.accountIds === null || caller.accountIds.includes(account.id),
  );
  return {
    agent_id: principal.id,
    name: principal.name,
    status: principal.status,
    observing: principal.status === 'observing',
    owner_name: principal.issuer_name,
    masked: true,
    wallet_address: mask(principal.wallet_address),
    fence: presentFence(principal),
    spaces: [
      {
        id: principal.space_id,
        name: principal.space_name,
        kind: 'business',
        base_currency: principal.base_currency,
        preset: 'default',
        perms: principal.perms,
        account_ids: accounts.map((account) => account.id),
        accounts_restricted: principal.accounts_restricted,
        number_format: 'dot_comma',
        accounts: accounts.map((account) => ({
          id: account.id,
          name: account.name,
          kind: account.kind,
          currency: account.currency,
          address: account.address === null ? null : mask(account.address),
        })),
      },
    ],
  };
}
