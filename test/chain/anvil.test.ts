import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { locateAnvil, startAnvil, waitForRpc } from '../../src/platform/chain/anvil.ts';
import { loadConfig } from '../../src/platform/config.ts';
import {
  buildChainApp,
  CHAIN_START_TIMEOUT_MS,
  isRunning,
  startTestChain,
  waitUntilGone,
} from './chain-setup.ts';

const CHILD = fileURLToPath(new URL('./anvil-child.ts', import.meta.url));

describe('the local anvil node', () => {
  it('finds the anvil executable shipped by the npm package', () => {
    const launch = locateAnvil();
    expect(existsSync(launch.command)).toBe(true);
  });

  it('starts on a free loopback port answering chain 31337, and stops leaving no process behind', async () => {
    const node = await startAnvil({ startTimeoutMs: CHAIN_START_TIMEOUT_MS });
    try {
      expect(node.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await waitForRpc(node.rpcUrl, 5_000)).toBe(31337);
      expect(isRunning(node.pid)).toBe(true);
    } finally {
      await node.stop();
    }
    expect(isRunning(node.pid)).toBe(false);
    await node.stop(); // a second stop is harmless
  });

  it.skipIf(process.platform !== 'linux' || !existsSync('/usr/bin/setpriv'))(
    'dies with its server even when the server is SIGKILLed (no orphan)',
    async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const line = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
        });
        child.once('exit', (code) => reject(new Error(`the child exited early (${code})`)));
      });
      const { pid } = JSON.parse(line) as { pid: number };
      expect(isRunning(pid)).toBe(true);
      child.kill('SIGKILL');
      expect(await waitUntilGone(pid, 10_000)).toBe(true);
    },
  );
});

describe('several servers on one machine', () => {
  it('gives each server its own anvil on its own port, each with the token deployed, and stops both', async () => {
    const chains = await Promise.all([startTestChain(), startTestChain()]);
    const apps = await Promise.all(chains.map((chain) => buildChainApp(chain)));
    const pids = chains.map((chain) => chain.local!.anvil!.pid);
    try {
      expect(new Set(chains.map((chain) => chain.local!.rpcUrl)).size).toBe(2);
      const address = privateKeyToAccount(generatePrivateKey()).address;
      const answers = await Promise.all(
        apps.map((app) =>
          app.inject({ method: 'POST', url: '/dev/faucet', payload: { address, usdc: '1' } }),
        ),
      );
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
      expect(answers.map((answer) => answer.json().rpc_url)).toEqual(
        chains.map((chain) => chain.local!.rpcUrl),
      );
      for (const chain of chains) {
        const local = chain.local!;
        const code = await local.publicClient.getCode({ address: local.network.token.address });
        expect(code?.length).toBeGreaterThan(2);
      }
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await Promise.all(chains.map((chain) => chain.close()));
    }
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
  });

  it('keeps the chain off by default under NODE_ENV=test and refuses it in production', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).chain).toBe(false);
    expect(loadConfig({}).chain).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test', CHAIN_RPC_URL: 'http://127.0.0.1:8545' }).chain).toBe(true);
    const production = { NODE_ENV: 'production', MASTER_KEY: 'cd'.repeat(32) };
    expect(loadConfig(production).chain).toBe(false);
    expect(() => loadConfig({ ...production, CHAIN: '1' })).toThrow(/refused when NODE_ENV=production/);
    expect(() => loadConfig({ ...production, BASE_RPC_URL: 'https://base.example' })).toThrow(
      /GAS_WALLET_KEY is required/,
    );
    expect(() => loadConfig({ GAS_WALLET_KEY: '0x1234' })).toThrow(/GAS_WALLET_KEY must be 0x/);
    expect(() => loadConfig({ CHAIN_RPC_URL: 'ftp://x' })).toThrow(/CHAIN_RPC_URL must start with/);
    expect(loadConfig({ BASE_RPC_URL: 'https://base.example' }).rpcUrls).toEqual({
      base: ['https://base.example'],
    });
  });

  it('takes a comma-separated list of nodes per network, and refuses a bad or repeated entry', () => {
    expect(loadConfig({ BASE_RPC_URL: 'https://a.example/k1, https://b.example/k2' }).rpcUrls).toEqual({
      base: ['https://a.example/k1', 'https://b.example/k2'],
    });
    expect(() => loadConfig({ BASE_RPC_URL: 'https://a.example,' })).toThrow(/empty entry/);
    expect(() => loadConfig({ BASE_RPC_URL: 'https://a.example,ftp://b' })).toThrow(/must start with/);
    expect(() => loadConfig({ BASE_RPC_URL: 'https://a.example,https://a.example' })).toThrow(/twice/);
  });
});
