import { Amount, Text, Type } from '../../platform/http/schema-kit.ts';

// POST /dev/faucet (DECISIONS "Development rails"). The schema checks the shapes; the service
// then checks what only the chain knows (the token's decimals) and the address checksum.

export const FaucetIn = Type.Object({
  address: Text({
    maxLength: 42,
    pattern: '^0x[0-9a-fA-F]{40}$',
    description: 'The EVM address to fund (0x + 40 hex characters; mixed case must be a valid checksum).',
  }),
  usdc: Amount('positive', {
    description: 'Test USDC to mint: more than 0, at most 1000000, at most 6 decimals.',
  }),
});

export const FaucetOut = Type.Object({
  network: Type.String({ description: 'CAIP-2 id of the local chain, eip155:31337.' }),
  asset: Type.String({ description: 'The test USDC contract.' }),
  tx_hash: Type.String({ description: 'The mint transaction.' }),
  gas_tx_hash: Type.String({ description: 'The transaction that sent gas money.' }),
  rpc_url: Type.String({ description: 'JSON-RPC URL of the local chain.' }),
});
