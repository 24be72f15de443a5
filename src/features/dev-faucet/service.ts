import { isAddress } from 'viem';
import { type AmountE8, parseAmountInput, UNIT } from '../../core/money.ts';
import type { LocalChain } from '../../platform/chain/chain.ts';
import { toBaseUnits } from '../../platform/chain/units.ts';
import type { ValidationItem } from '../../platform/http/validation.ts';

export type FaucetDeps = { local: LocalChain };

export type FaucetInput = { address: string; usdc: number | string };

export type FaucetAnswer = {
  network: string;
  asset: string;
  tx_hash: string;
  gas_tx_hash: string;
  rpc_url: string;
};

export type FaucetOutcome = { ok: true; value: FaucetAnswer } | { ok: false; problems: ValidationItem[] };

/** The most test USDC one call mints, so a typo cannot mint an absurd supply. */
export const FAUCET_USDC_MAX = (1_000_000n * UNIT) as AmountE8;

/** The amount in the token's base units, or the problems with it (every one at once). */
function checkInput(input: FaucetInput, decimals: number): { problems: ValidationItem[]; baseUnits: bigint } {
  const problems: ValidationItem[] = [];
  // viem's isAddress also refuses mixed case that is not a valid EIP-55 checksum.
  if (!isAddress(input.address)) {
    problems.push({
      loc: ['body', 'address'],
      msg: 'Input should be an EVM address; mixed case must be a valid EIP-55 checksum',
      type: 'value_error',
    });
  }
  const parsed = parseAmountInput(input.usdc);
  let baseUnits = 0n;
  if (parsed.ok && parsed.value > FAUCET_USDC_MAX) {
    problems.push({
      loc: ['body', 'usdc'],
      msg: 'Amount should be at most 1000000',
      type: 'less_than_equal',
    });
  } else if (parsed.ok) {
    const converted = toBaseUnits(parsed.value, decimals);
    if (converted.ok) baseUnits = converted.value;
    else {
      problems.push({
        loc: ['body', 'usdc'],
        msg: `Amount should have no more than ${decimals} decimal places`,
        type: 'decimal_max_places',
      });
    }
  }
  return { problems, baseUnits };
}

/** Mints test USDC to the address and sends it gas money on the local chain. */
export async function fundFromFaucet(deps: FaucetDeps, input: FaucetInput): Promise<FaucetOutcome> {
  const { network } = deps.local;
  const { problems, baseUnits } = checkInput(input, network.token.decimals);
  if (problems.length > 0) return { ok: false, problems };
  const funded = await deps.local.fund(input.address as `0x${string}`, baseUnits);
  return {
    ok: true,
    value: {
      network: network.caip2,
      asset: network.token.address,
      tx_hash: funded.mintTxHash,
      gas_tx_hash: funded.gasTxHash,
      rpc_url: deps.local.rpcUrl,
    },
  };
}
