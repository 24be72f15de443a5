import { type PendingSettlementStore, x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork } from '../../platform/chain/networks.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db/database.ts';
import * as store from './store.ts';

// The x402 facilitator Tollbook runs: the maintained @x402/core facilitator with @x402/evm's
// exact scheme, one registration per configured network, signing with the gas wallet. Every
// signature, amount, time-window, nonce and simulation check is theirs; this file only wires
// viem clients and our PostgreSQL-backed pending-settlement store into it.

/** How long a settlement waits for its receipt before answering `settlement_pending`. */
const CONFIRMATION_TIMEOUT_MS = 60_000;

export type Facilitator = {
  engine: x402Facilitator;
  /** Networks with a gas wallet, by CAIP-2 id: only these can be settled. */
  networks: Map<string, ConfiguredNetwork>;
  gasWallet: string | undefined;
};

/** The scheme's pending-settlement store, shared by every process through PostgreSQL. */
function pendingStore(db: Db): PendingSettlementStore {
  return {
    get: (key) => store.findPendingTransaction(db, sha256Hex(key)),
    set: (key, txHash) => store.savePendingTransaction(db, sha256Hex(key), txHash, new Date()),
    delete: (key) => store.deletePendingTransaction(db, sha256Hex(key)),
  };
}

export function createFacilitator(db: Db, chain: Chain | undefined): Facilitator {
  const engine = new x402Facilitator();
  const networks = new Map<string, ConfiguredNetwork>();
  for (const network of chain?.networks.list() ?? []) {
    const clients = chain!.clients(network.name);
    const wallet = clients?.walletClient;
    if (!clients || !wallet) continue;
    const { publicClient } = clients;
    // viem's clients have every method the scheme needs; their argument types are stricter than
    // the scheme's structural ones, hence the casts at this one seam.
    const signer = toFacilitatorEvmSigner(
      {
        address: wallet.account.address,
        readContract: (args) => publicClient.readContract(args as never),
        verifyTypedData: (args) => publicClient.verifyTypedData(args as never),
        writeContract: (args) => wallet.writeContract(args as never),
        sendTransaction: (args) => wallet.sendTransaction(args as never),
        waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
        getCode: (args) => publicClient.getCode(args),
      },
      { confirmationTimeoutMs: CONFIRMATION_TIMEOUT_MS },
    );
    engine.register(network.caip2, new ExactEvmScheme(signer, { pendingSettlementStore: pendingStore(db) }));
    networks.set(network.caip2, network);
  }
  return { engine, networks, gasWallet: chain?.gasWallet };
}
