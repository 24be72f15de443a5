// The Node side of a charge, measured in process: CPU time (user + system) this process spends
// per paid charge, calling the service function as the route and the charges benchmark do, on the
// database handle, `WORKERS` charges in flight. CPU time does not depend on how busy the shared
// machine is the way throughput does; the best of several rounds is printed. Needs PostgreSQL:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test_x npx tsx bench/trace-charge-cpu.ts
// With CHARGE_CPU_MINIMAL=1 it measures the charges benchmark's minimal reference the same way.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { asAmount } from '../src/core/money.ts';
import { charge } from '../src/features/charges/service.ts';
import { chargeWorld } from './charge-world.ts';

const REFS = 200;
const WORKERS = Number(process.env.CHARGE_CPU_WORKERS ?? 20);
const PER_ROUND = Number(process.env.CHARGE_CPU_CHARGES ?? 4_000);
const ROUNDS = Number(process.env.CHARGE_CPU_ROUNDS ?? 5);
const PRICE = asAmount(10_000n); // 0.0001 USD
const TOP_UP = asAmount(1_000n * 10n ** 8n);

const { h, bank, deps, caller, topUp } = await chargeWorld();
const refs = Array.from({ length: REFS }, (_, index) => `cpu-${index}-${randomUUID().slice(0, 8)}`);
for (const ref of refs) await topUp(ref, TOP_UP);

// The minimal reference of bench/charges.ts, on ledger accounts of a space of its own.
const minimalAccounts = new Map<string, string>();
if (process.env.CHARGE_CPU_MINIMAL) {
  const { key: other } = await h.world({ scopes: ['payments'] });
  for (const ref of refs) {
    const id = randomUUID();
    await sql`INSERT INTO ledger_accounts (id, space_id, kind, ref, currency, normal_side, tracks_balance, no_overdraft,
      balance, created_at)
      VALUES (${id}, ${other.spaceId}, 'client_credit', ${ref}, 'USD', 'credit', true, true, -1000000, now())`.execute(
      h.db,
    );
    minimalAccounts.set(ref, id);
  }
  (caller as { spaceId: string }).spaceId = other.spaceId;
}

async function one(ref: string): Promise<void> {
  if (process.env.CHARGE_CPU_MINIMAL) {
    const at = new Date();
    await sql`WITH moved AS (UPDATE ledger_accounts SET balance = balance + ${'0.00010000'}::numeric
      WHERE id = ${minimalAccounts.get(ref)!} AND -(balance + ${'0.00010000'}::numeric) >= 0 RETURNING balance)
      INSERT INTO ledger_entries (id, space_id, origin, kind, occurred_on, cause_type, created_at)
      SELECT ${randomUUID()}, ${caller.spaceId}, 'internal', 'income', ${at.toISOString().slice(0, 10)}, 'bench', ${at}
      FROM moved RETURNING id`.execute(h.db);
    return;
  }
  const input = { client_ref: ref, account_id: bank.id, amount: '0.0001' };
  const answer = await charge(h.db, deps, caller, input, { price: PRICE, topUp: null });
  if (!answer.paid) throw new Error('a funded charge was refused');
}

/**
 * CPU time (ms) the PostgreSQL backends serving this database have used so far, from /proc (the
 * server must run on this machine): what the database spends on the charges, apart from other
 * databases' work on the shared server. WAL writing by the server's own processes is not in it.
 */
async function backendCpuMs(): Promise<number> {
  const rows = await sql<{
    pid: number;
  }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(h.db);
  let ticks = 0;
  for (const { pid } of rows.rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks * 10;
}

async function round(): Promise<{ cpuUs: number; wallMs: number; pgUs: number }> {
  let next = 0;
  const pgBefore = await backendCpuMs();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < PER_ROUND) await one(refs[next++ % refs.length]!);
    }),
  );
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - started;
  const pgUs = (((await backendCpuMs()) - pgBefore) * 1000) / PER_ROUND;
  return { cpuUs: (used.user + used.system) / PER_ROUND, wallMs, pgUs };
}

await round(); // warm: kept rows, prepared statements, JIT
const results = [];
for (let index = 0; index < ROUNDS; index++) results.push(await round());
const best = Math.min(...results.map((result) => result.cpuUs));
process.stdout.write(
  `${process.env.CHARGE_CPU_MINIMAL ? 'minimal' : 'charge'}: CPU per charge, ${WORKERS} in flight: ` +
    `best ${best.toFixed(1)} µs, rounds ${results.map((r) => r.cpuUs.toFixed(0)).join(' ')}; ` +
    `database backends per charge: best ${Math.min(...results.map((r) => r.pgUs)).toFixed(0)} µs, ` +
    `rounds ${results.map((r) => r.pgUs.toFixed(0)).join(' ')}; ` +
    `tx/s per round ${results.map((r) => ((PER_ROUND / r.wallMs) * 1000).toFixed(0)).join(' ')}\n`,
);
await h.close();
