// A stand-in server for the orphan test: starts anvil, prints its pid and address as one JSON
// line, then waits to be killed (SIGKILL: no handler of ours gets to run).
import { startAnvil } from '../../src/platform/chain/anvil.ts';

const node = await startAnvil({ startTimeoutMs: 60_000 });
process.stdout.write(`${JSON.stringify({ pid: node.pid, rpcUrl: node.rpcUrl })}\n`);
setInterval(() => {}, 60_000);
