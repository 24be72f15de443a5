// The agents benchmark's load-independent companion: server CPU time per paid x402 fetch, the
// plain @x402/fetch client's against the agent's POST /agent/x402, on the same server and data.
//   npx tsx bench/agents-cpu.ts            (BENCH_AGENTS_CPU_ROUNDS, BENCH_AGENTS_CPU_SETS)
// Wall-clock figures on a shared machine follow its load; CPU time the server process spends
// (all its threads, read from /proc) does much less. Each side runs in sets of rounds, one
// payment at a time, and the best set counts. Both sides mint their pay URL in the round and
// both pay a pay page of this server, so the difference is what the agent's path adds: its
// HTTP request, the door, the gate, the client run on the server, signing, reserve and finish.

import { readFileSync } from 'node:fs';
import { agentRound, plainRound, prepare, type Setup } from './agents.ts';
import { type BenchContext, fmt, gatherFacts, readSettings, withFreshServer } from './lib.ts';

const ROUNDS = Number(process.env.BENCH_AGENTS_CPU_ROUNDS ?? 40);
const SETS = Number(process.env.BENCH_AGENTS_CPU_SETS ?? 5);
const TICKS_PER_SECOND = 100;

/** User plus system CPU of a process, in milliseconds (Linux /proc, clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

async function bestSet(setup: Setup, pid: number, round: (setup: Setup) => Promise<number>) {
  let best = Number.POSITIVE_INFINITY;
  for (let set = 0; set < SETS; set++) {
    const before = cpuMsOf(pid);
    for (let index = 0; index < ROUNDS; index++) await round(setup);
    best = Math.min(best, (cpuMsOf(pid) - before) / ROUNDS);
  }
  return best;
}

async function main() {
  const ctx: BenchContext = { facts: await gatherFacts(), settings: readSettings(), log: console.log };
  const report = await withFreshServer(
    ctx,
    'agents-cpu',
    'tollbook_bench_agents_cpu',
    async (server) => {
      const setup = await prepare(server);
      for (let index = 0; index < 10; index++) {
        await plainRound(setup);
        await agentRound(setup);
      }
      const plain = await bestSet(setup, server.pid, plainRound);
      const agent = await bestSet(setup, server.pid, agentRound);
      const plainAgain = await bestSet(setup, server.pid, plainRound);
      const agentAgain = await bestSet(setup, server.pid, agentRound);
      const plainBest = Math.min(plain, plainAgain);
      const agentBest = Math.min(agent, agentAgain);
      console.log(`server CPU per round, best set of ${ROUNDS} rounds (of ${2 * SETS} sets each):`);
      console.log(
        `  plain @x402/fetch client:  ${fmt(plainBest, 2)} ms (sets: ${fmt(plain, 2)}, ${fmt(plainAgain, 2)})`,
      );
      console.log(
        `  agent POST /agent/x402:    ${fmt(agentBest, 2)} ms (sets: ${fmt(agent, 2)}, ${fmt(agentAgain, 2)})`,
      );
      console.log(
        `  the agent's path adds:     ${fmt(agentBest - plainBest, 2)} ms of server CPU per paid fetch`,
      );
    },
    { CHAIN: '1', WEBHOOK_ALLOW_PRIVATE: '1' },
  );
  for (const failure of report.failures) console.log(`FAILED: ${failure}`);
  for (const skipped of report.skipped) console.log(`skipped: ${skipped}`);
  process.exit(report.failures.length > 0 ? 1 : 0);
}

await main();
