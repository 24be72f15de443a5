import type { SettleResponse } from '@x402/core/types';
import { getAddress } from 'viem';
import { fromBaseUnits } from '../../platform/chain/units.ts';
import { findProvenAccounts } from '../accounts/index.ts';
import { mintRequest } from '../payment-requests/index.ts';
import { lookOnce } from './lanes.ts';
import { bookSettlement, type X402Deps } from './service.ts';
import * as store from './store.ts';

// The follower: settlements a payer stopped waiting for (`settlement_pending`) and no retry has
// finished, taken up once their claim's lease ran out. A mined transfer is booked with the hash
// that mined; a reverted one, or one none of whose transactions can mine any more, frees the
// claim; an unknown read changes nothing and is asked again next round.

/** How many pending settlements one round looks at. */
const ROUND_LIMIT = 50;

/** One round over the pending settlements; answers how many were finished (booked or failed). */
export async function followPendingSettlements(deps: X402Deps): Promise<number> {
  let finished = 0;
  for (const claim of await store.pendingBroadcastClaims(deps.db, deps.clock.now(), ROUND_LIMIT)) {
    const follower = deps.facilitator.followers.get(claim.network);
    if (!follower || claim.tx_hash === null) continue;
    const look = await lookOnce(follower, claim.tx_hash);
    if (look.kind === 'unknown') continue;
    if (look.kind === 'absent' || look.value.status !== 'success') {
      const reason = look.kind === 'absent' ? 'transaction_dropped' : 'transaction_failed';
      await store.markFailed(deps.db, claim.id, reason, claim.tx_hash);
      finished++;
      continue;
    }
    const response: SettleResponse = {
      success: true,
      transaction: look.value.transactionHash,
      network: claim.network as SettleResponse['network'],
      payer: getAddress(claim.payer),
    };
    if (claim.payment_request_id !== null) {
      await bookSettlement(deps, claim, response, { requestId: claim.payment_request_id });
      finished++;
    } else if (await bookMinted(deps, claim, response)) finished++;
  }
  return finished;
}

/** A facilitator payment: booked on a request minted for it, as the settling call would have. */
async function bookMinted(deps: X402Deps, claim: store.SettlementClaim, response: SettleResponse) {
  const network = deps.facilitator.networks.get(claim.network);
  const account = (await findProvenAccounts(deps.db, claim.pay_to)).find(
    (candidate) => candidate.space_id === claim.space_id && candidate.network === network?.name,
  );
  const amount = network ? fromBaseUnits(BigInt(claim.amount_base), network.token.decimals) : undefined;
  if (!account || !amount?.ok) {
    deps.logger?.error({ claim: claim.id }, 'a mined x402 settlement has no account to be booked in');
    return false;
  }
  await bookSettlement(deps, claim, response, {
    requestIn: async (tx) => {
      const minted = await mintRequest(tx, deps, {
        spaceId: claim.space_id,
        keyId: null,
        accountId: account.id,
        amount: amount.value,
        currency: null,
        expiresAt: null,
        memo: '',
        resource: claim.resource_url ?? '',
      });
      return minted.id;
    },
  });
  return true;
}
