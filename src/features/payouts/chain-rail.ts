import { encodeFunctionData, erc20Abi, type Hash, parseEventLogs } from 'viem';
import { AppError } from '../../core/errors.ts';
import type { Chain } from '../../platform/chain/chain.ts';
import type { ConfiguredNetwork, NetworkName } from '../../platform/chain/networks.ts';
import { toBaseUnits } from '../../platform/chain/units.ts';
import type { AccountRow } from '../accounts/index.ts';
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
  return (await client.getBlockNumber()) - receipt.blockNumber + 1n;
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
