import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../db/database.ts';
import { CalledInsideTransactionError } from '../db/transaction-guard.ts';
import { connectClients } from './chain.ts';
import { networkDefinition } from './networks.ts';
import { classifyRead } from './outcome.ts';

// Every chain client refuses to reach a node from a transaction's work, and the refusal is a bug
// (thrown), never an `unknown` read that would be retried forever in silence.

let database: DatabaseHandle;
let node: Server;
let requests = 0;
let clients: ReturnType<typeof connectClients>;

beforeAll(async () => {
  database = await openDatabase({ dataDir: 'memory://' });
  // A node on loopback answering eth_blockNumber, counting what reaches it.
  node = createServer((req, res) => {
    requests += 1;
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x2a' }));
    });
  });
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
  clients = connectClients(networkDefinition('local'), [url, url], [`0x${'11'.repeat(32)}`], 2_000);
});
afterAll(async () => {
  await database?.close();
  await new Promise<void>((resolve) => node.close(() => resolve()));
});

describe('chain clients and database transactions', () => {
  it('answers a read made outside any transaction', async () => {
    expect(await clients.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(42n);
    expect(await clients.nodes[0]!.client.getBlockNumber({ cacheTime: 0 })).toBe(42n);
  });

  it('refuses a read from a transaction on the network client, a node client and the wallet client, and nothing reaches the node', async () => {
    const before = requests;
    const inside = (read: () => Promise<unknown>) => database.db.transaction().execute(() => read());
    await expect(inside(() => clients.publicClient.getBlockNumber({ cacheTime: 0 }))).rejects.toSatisfy(
      (error) => String(error).includes('a chain node was called inside a database transaction'),
    );
    await expect(inside(() => clients.nodes[1]!.client.getBlockNumber({ cacheTime: 0 }))).rejects.toSatisfy(
      (error) => String(error).includes('inside a database transaction'),
    );
    await expect(inside(() => clients.walletClient!.getChainId())).rejects.toSatisfy((error) =>
      String(error).includes('inside a database transaction'),
    );
    expect(requests).toBe(before);
  });

  it('rethrows the refusal from classifyRead instead of calling it unknown', async () => {
    const read = database.db
      .transaction()
      .execute(() => classifyRead(() => clients.nodes[0]!.client.getBlockNumber({ cacheTime: 0 })));
    await expect(read).rejects.toSatisfy((error) => {
      for (let cause: unknown = error; cause instanceof Error; cause = cause.cause)
        if (cause instanceof CalledInsideTransactionError) return true;
      return false;
    });
  });
});
