import type { LocalChain } from '../../platform/chain/chain.ts';

export { type DevFaucetRouteDeps, registerDevFaucetRoutes } from './routes.ts';
export { FAUCET_USDC_MAX, type FaucetAnswer, fundFromFaucet } from './service.ts';

/** The lines `npm start` prints about the local chain, after the demo block. */
export function describeLocalChain(local: LocalChain, publicUrl: string): string {
  const { token } = local.network;
  const example = JSON.stringify({ address: '0xYourAddress', usdc: '100' });
  return [
    '',
    `Local chain (development only: ${local.anvil ? 'anvil started by this server' : 'CHAIN_RPC_URL'}).`,
    `  Network:         ${local.network.caip2}`,
    `  RPC URL:         ${local.rpcUrl}`,
    `  Test USDC:       ${token.address} (${token.name}, version ${token.version}, ${token.decimals} decimals)`,
    `  Faucet:          curl -X POST -H 'content-type: application/json' -d '${example}' ${publicUrl}/dev/faucet`,
    '',
  ].join('\n');
}
