// The agent's x402 client on the server, in process: CPU of what a paid fetch builds and signs,
// the official helpers (toClientEvmSigner + registerExactEvmScheme, as payingFetch used them
// before s27-agents) against what it does now (agentSigner, the schemes registered with their v1
// names listed once). No network: the 402 quote is made here and the payment is only created.
// The signing's overlap with the reservation's statement is not in these figures (no database).
//   npx tsx bench/agents-client-cpu.ts        (BENCH_CLIENT_CPU_ROUNDS, BENCH_CLIENT_CPU_SETS)
// CPU time of this process (process.cpuUsage), sets alternated old/new, the best set counts.

import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme, registerExactEvmScheme } from '@x402/evm/exact/client';
import { EVM_NETWORK_CHAIN_ID_MAP, ExactEvmSchemeV1 } from '@x402/evm/v1';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { agentSigner } from '../src/features/agents/signer.ts';
import { LOCAL_NETWORK, localExactRequirement } from '../test/fixtures/local-network.ts';
import { fmt } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_CLIENT_CPU_ROUNDS ?? 300);
const SETS = Number(process.env.BENCH_CLIENT_CPU_SETS ?? 8);

const network = LOCAL_NETWORK;
const account = privateKeyToAccount(generatePrivateKey());
const quote = {
  x402Version: 2,
  resource: { url: 'http://localhost/pay/x', description: '', mimeType: 'application/json' },
  accepts: [localExactRequirement()],
};

function officialClient() {
  const client = new x402Client();
  registerExactEvmScheme(client, {
    signer: toClientEvmSigner(account, undefined as never),
    networks: [network.caip2],
  });
  client.setSpendControls({ maxAmountPerPayment: false, allowedAssets: true });
  return client;
}

const v1Names = Object.entries(EVM_NETWORK_CHAIN_ID_MAP)
  .filter(([, id]) => id === network.chainId)
  .map(([name]) => name);

function agentClient() {
  const client = new x402Client();
  const signer = agentSigner(account, undefined);
  client.register(network.caip2, new ExactEvmScheme(signer));
  for (const name of v1Names) client.registerV1(name, new ExactEvmSchemeV1(signer));
  client.setSpendControls({ maxAmountPerPayment: false, allowedAssets: true });
  return client;
}

type Step = () => unknown;

async function cpuPerRound(step: Step): Promise<number> {
  const before = process.cpuUsage();
  for (let index = 0; index < ROUNDS; index++) await step();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / ROUNDS;
}

async function compare(name: string, old: Step, now: Step) {
  for (let index = 0; index < 30; index++) {
    await old();
    await now();
  }
  let bestOld = Number.POSITIVE_INFINITY;
  let bestNew = Number.POSITIVE_INFINITY;
  for (let set = 0; set < SETS; set++) {
    bestOld = Math.min(bestOld, await cpuPerRound(old));
    bestNew = Math.min(bestNew, await cpuPerRound(now));
  }
  console.log(
    `  ${name.padEnd(44)} official ${fmt(bestOld, 1).padStart(6)} µs   agent's ${fmt(bestNew, 1).padStart(6)} µs   saves ${fmt(bestOld - bestNew, 1)} µs`,
  );
}

console.log(`CPU per round, best of ${SETS} alternated sets of ${ROUNDS} rounds:`);
await compare('build the client (schemes for one network)', officialClient, agentClient);
const oldClient = officialClient();
const newClient = agentClient();
await compare(
  'create one payment (sign the authorization)',
  () => oldClient.createPaymentPayload(quote as never),
  () => newClient.createPaymentPayload(quote as never),
);
await compare(
  'both, as one paid fetch does',
  () => officialClient().createPaymentPayload(quote as never),
  () => agentClient().createPaymentPayload(quote as never),
);
// A fresh Request a round on both sides (a copy follows its original's abort signal).
const payUrl = 'http://localhost:3000/pay/abc';
const init = { headers: { accept: 'application/json' } };
await compare(
  'the safe fetch: a copy of the Request, or none',
  () => new Request(new Request(payUrl, init)),
  () => new Request(payUrl, init),
);
