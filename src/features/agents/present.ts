import { formatAmount } from '../../core/money.ts';
import { readAmount } from '../ledger/index.ts';
import type * as store from './store.ts';

// How an agent's fence reads in an answer: the agent API's "who am I" (door.ts) and the owner's
// app API (service.ts) show the same shape.

export function presentFence(row: store.AgentRow) {
  return {
    x402_hosts: row.x402_hosts,
    allowed_merchants: row.allowed_merchants,
    per_request_usd: formatAmount(readAmount(row.per_request_usd)),
    daily_usd: formatAmount(readAmount(row.daily_usd)),
    expires_at: row.fence_expires_at?.toISOString() ?? null,
  };
}
