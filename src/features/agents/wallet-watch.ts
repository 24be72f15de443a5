import type { Clock } from '../../core/clock.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import type { Queryable } from '../../platform/db/database.ts';
import * as store from './store.ts';
import { walletAccount } from './wallet.ts';

// What the chain watch needs to book money coming into agents' hot wallets. Each wallet's key was
// made on this server, so its address needs no signed challenge: the watch follows it like a
// proven account's, and its first incoming transfer makes the wallet's account (proven).

export type WatchedWallet = { space_id: string; name: string; address: string };

/** Every agent wallet, by lowercase address. */
export async function watchedAgentWallets(db: Queryable): Promise<Map<string, WatchedWallet>> {
  const rows = await store.agentWallets(db);
  return new Map(
    rows.map((row) => [
      row.wallet_address.toLowerCase(),
      { space_id: row.space_id, name: row.name, address: row.wallet_address.toLowerCase() },
    ]),
  );
}

/** The wallet's (proven) account on the network, made on first use, as the watch books into. */
export async function walletAccountForWatch(
  tx: Queryable,
  clock: Clock,
  wallet: WatchedWallet,
  network: ConfiguredNetwork,
) {
  const account = await walletAccount(
    tx,
    { clock },
    { space_id: wallet.space_id, wallet_address: wallet.address, name: wallet.name },
    network,
  );
  return { id: account.id, space_id: account.space_id, address: wallet.address, currency: account.currency };
}
