import { type Address, encodeFunctionData, getAddress, numberToHex, parseAbi } from 'viem';
import type { AmountE8 } from '../../core/money.ts';
import type { ConfiguredNetwork } from './networks.ts';
import { toBaseUnits } from './units.ts';

// What a payer's wallet needs to send one exact ERC-20 transfer: the EIP-681 URI a QR code
// carries, and the transaction an injected browser wallet (EIP-1193) is asked to send.

const TRANSFER_ABI = parseAbi(['function transfer(address to, uint256 value) returns (bool)']);

export type WalletPayment = {
  /** `ethereum:<token>@<chainId>/transfer?address=<recipient>&uint256=<base units>` (EIP-681). */
  uri: string;
  chainId: number;
  /** The chain id as EIP-1193 spells it (`0x7a69`). */
  chainIdHex: string;
  /** The network's name for people (networks.ts), as the page asks the payer to switch to it. */
  networkName: string;
  token: Address;
  recipient: Address;
  baseUnits: bigint;
  /** `transfer(recipient, baseUnits)` encoded: the transaction's data. */
  data: `0x${string}`;
  /**
   * Only for the development chain, which no wallet knows: its RPC URL, so the page can ask the
   * wallet to add it (wallet_addEthereumChain). A public network's URL may carry a provider key
   * and is never shown.
   */
  localRpcUrl: string | undefined;
};

/**
 * The transfer of `amount` to `recipient` on `network`, or undefined when the token cannot carry
 * the amount exactly (it is never rounded to something the payer would then send).
 */
export function walletPayment(
  network: ConfiguredNetwork,
  recipient: string,
  amount: AmountE8,
): WalletPayment | undefined {
  const baseUnits = toBaseUnits(amount, network.token.decimals);
  if (!baseUnits.ok || baseUnits.value <= 0n) return undefined;
  const token = getAddress(network.token.address);
  const to = getAddress(recipient);
  return {
    uri: `ethereum:${token}@${network.chainId}/transfer?address=${to}&uint256=${baseUnits.value}`,
    chainId: network.chainId,
    chainIdHex: numberToHex(network.chainId),
    networkName: network.label,
    token,
    recipient: to,
    baseUnits: baseUnits.value,
    data: encodeFunctionData({ abi: TRANSFER_ABI, functionName: 'transfer', args: [to, baseUnits.value] }),
    localRpcUrl: network.name === 'local' ? network.rpcUrl : undefined,
  };
}
