import { encodeFunctionData, erc20Abi, type Hash, parseEventLogs } from 'viem';
import { AppError } from '../../core/errors.ts';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork, NetworkName } from '../../platform/chain/networks.ts';
import { toBaseUnits } from '../../platform/chain/units.ts';
import type { AccountRow } from '../accounts/index.ts';
import { reverseEntry } from '../ledger/index.ts';
import { execute } from './execution.ts';
import { onLockedPayout, type PayoutsDeps } from './service.ts';
import * as store from './store.ts';

// The chain rail: a person signs the transfer in a browser wallet. We answer the unsigned
// ERC-20 transfer; a reported transaction is read back from the chain and must carry exactly
// that transfer (the token, from the account's proven address, to the destination, for the
// amount) before the payment is executed, once the network's confirmations are reached.

export type ChainRailDeps = PayoutsDeps & {
  chain: Chain | undefined;
  confirmations: Partial<Record<NetworkName, number>>;
};

function refuse(field: string, detail: string): never {
  throw new AppError('invalid_request', detail, { field });
}

function railOf(deps: ChainRailDeps, row: store.PayoutRow, account: AccountRow) {
  if (row.rail !== 'chain') refuse('rail', 'Only a chain payment has an on-chain transfer.');
  const network = account.network ? deps.chain?.networks.byName(account.network as NetworkName) : undefined;
  if (!network) refuse('account_id', `The network ${account.network} is not configured on this server.`);
  if (!account.address_proven) {
    refuse('account_id', 'Prove control of the account’s address first: the transfer must come from it.');
  }
  const units = toBaseUnits(store.amountOf(row), network.token.decimals);
  if (!units.ok) {
    throw new AppError('amount_not_accepted', `The token has ${network.token.decimals} decimals.`, {
      field: 'amount',
    });
  }
  return { network, from: account.address_proven, units: units.value };
}

function unsigned(network: ConfiguredNetwork, from: string, destination: string, units: bigint) {
  return {
    chain_id: network.chainId,
    network: network.caip2,
    from,
    to: network.token.address,
    value: '0x0',
    data: encodeFunctionData({
      abi: erc20Abi,
      functionName: 'transfer',
      args: [destination as `0x${string}`, units],
    }),
  };
}

/** The transfer for the person's wallet to sign and send (an executing chain payment). */
export function chainTransaction(deps: ChainRailDeps, userId: string, spaceId: string, payoutId: string) {
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ row, account }) => {
    const rail = railOf(deps, row, account);
    if (row.status !== 'executing') {
      throw new AppError('payment_state', `A payment that is ${row.status} has no transfer to sign.`, {
        status: row.status,
      });
    }
    return unsigned(rail.network, rail.from, row.destination, rail.units);
  });
}

/** Confirmations of the transaction that carries the payment's transfer; refuses any other. */
async function confirmationsOf(
  deps: ChainRailDeps,
  rail: ReturnType<typeof railOf>,
  row: store.PayoutRow,
  txHash: Hash,
): Promise<bigint> {
  const client = deps.chain!.clients(rail.network.name)!.publicClient;
  const receipt = await client.getTransactionReceipt({ hash: txHash }).catch(() => undefined);
  if (!receipt) refuse('tx_hash', 'No mined transaction with this hash on the account’s network.');
  if (receipt.status !== 'success') refuse('tx_hash', 'The transaction failed on chain.');
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
  const matches = transfers.some(
    (log) =>
      log.address.toLowerCase() === rail.network.token.address.toLowerCase() &&
      log.args.from.toLowerCase() === rail.from.toLowerCase() &&
      log.args.to.toLowerCase() === row.destination &&
      log.args.value === rail.units,
  );
  if (!matches) {
    refuse('tx_hash', 'The transaction does not carry this payment’s transfer from the account’s address.');
  }
  // Not the client's cached head: a block mined a moment ago counts.
  return (await client.getBlockNumber({ cacheTime: 0 })) - receipt.blockNumber + 1n;
}

/**
 * A person reports the transaction they sent. It is recorded on the payment; once it has the
 * network's confirmations (reported again, or seen later) the payment is executed.
 */
export async function reportChainTx(
  deps: ChainRailDeps,
  userId: string,
  spaceId: string,
  payoutId: string,
  txHash: string,
) {
  const first = await store.findPayout(deps.db, spaceId, payoutId);
  if (!first) throw new AppError('not_found', 'No payment with this id in this space.');
  const hash = txHash.toLowerCase() as Hash;
  // The chain is read outside the transaction; the payment's state is checked again under its lock.
  const { account } = await onLockedPayout(deps, { userId, spaceId, payoutId }, async (locked) => locked);
  const rail = railOf(deps, first, account);
  const confirmations = await confirmationsOf(deps, rail, first, hash);
  const needed = BigInt(deps.confirmations[rail.network.name] ?? 1);
  return onLockedPayout(deps, { userId, spaceId, payoutId }, async ({ tx, row, account: locked }) => {
    if (row.status === 'executed' && row.tx_hash === hash) return row;
    if (row.status !== 'executing') {
      throw new AppError('payment_state', `A payment that is ${row.status} takes no transaction.`, {
        status: row.status,
      });
    }
    if (row.tx_hash !== null && row.tx_hash !== hash) {
      throw new AppError('conflict', 'Another transaction was already reported for this payment.');
    }
    if (confirmations < needed) {
      await store.updatePayout(tx, spaceId, row.id, { tx_hash: hash, updated_at: deps.clock.now() });
      row.tx_hash = hash;
      return row;
    }
    if (!(await execute({ tx, deps, account: locked }, row, { txHash: hash }))) {
      throw new AppError('insufficient_balance', 'The account’s book balance does not carry this payment.');
    }
    return row;
  });
}

/** How long an executed chain payment is re-checked against reorganisations. */
const REORG_WATCH_MS = 24 * 60 * 60 * 1000;
const FOLLOW_BATCH = 100;

type Followed = { executed: number; reversed: number };

/** Undoes a payment whose transaction a reorganisation removed: reversal entry, back to executing. */
async function undoExecution(
  deps: ChainRailDeps,
  row: store.PayoutRow,
  tx: Parameters<typeof reverseEntry>[0],
) {
  const at = deps.clock.now();
  const reversed = await reverseEntry(
    tx,
    row.space_id,
    row.transaction_id!,
    at,
    at.toISOString().slice(0, 10),
    'chain reorganisation',
  );
  if (!reversed.ok) throw new Error(`Reversing payment ${row.id} was refused: ${reversed.code}`);
  await store.updatePayout(tx, row.space_id, row.id, {
    status: 'executing',
    transaction_id: null,
    executed_at: null,
    updated_at: at,
  });
}

/**
 * The worker's side of the chain rail: a reported transaction that reached its confirmations
 * executes its payment; an executed payment whose transaction is no longer on the chain (a
 * reorganisation) is reversed and waits in `executing` until the transaction is seen again.
 */
export async function followChainPayouts(deps: ChainRailDeps): Promise<Followed> {
  const done: Followed = { executed: 0, reversed: 0 };
  if (!deps.chain) return done;
  const since = new Date(deps.clock.now().getTime() - REORG_WATCH_MS);
  for (const found of await store.chainPayoutsToFollow(deps.db, since, FOLLOW_BATCH)) {
    const ids = { userId: null, spaceId: found.space_id, payoutId: found.id };
    await onLockedPayout(deps, ids, async ({ tx, row, account }) => {
      const rail = railOf(deps, row, account);
      const confirmations = await confirmationsOf(deps, rail, row, row.tx_hash as Hash).catch(
        () => undefined,
      );
      const needed = BigInt(deps.confirmations[rail.network.name] ?? 1);
      if (row.status === 'executed' && confirmations === undefined) {
        await undoExecution(deps, row, tx);
        done.reversed++;
      } else if (row.status === 'executing' && confirmations !== undefined && confirmations >= needed) {
        if (await execute({ tx, deps, account }, row, { txHash: row.tx_hash! })) done.executed++;
      }
    });
  }
  return done;
}
