import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';

// The development chain: an anvil node from the `@foundry-rs/anvil` npm package, started on a
// free loopback port and stopped with the server. The port is chosen by the operating system
// (`--port 0`) and read from anvil's own "Listening on" line, so two servers on one machine
// never race for a port. Anvil must never outlive us: it is stopped on close, killed on process
// exit and, on Linux, started under `setpriv --pdeathsig` so that even a SIGKILLed server takes
// its node with it.

export type AnvilNode = {
  rpcUrl: string;
  chainId: number;
  pid: number;
  /** Stops the node and resolves once its process is gone. Safe to call more than once. */
  stop(): Promise<void>;
};

export type AnvilOptions = {
  chainId?: number;
  /** How long to wait for the node to answer `eth_chainId`. */
  startTimeoutMs?: number;
  /** An explicit executable; otherwise the npm package's binary is used. */
  binaryPath?: string;
};

export class AnvilError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnvilError';
  }
}

const DEFAULT_CHAIN_ID = 31337;
const DEFAULT_START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const STDERR_KEPT_CHARS = 4_000;
const LISTENING_LINE = /Listening on ([\d.]+):(\d+)/;

const ARCH_NAMES: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };
const executableName = process.platform === 'win32' ? 'anvil.exe' : 'anvil';

type Launch = { command: string; args: string[] };

/**
 * Where the anvil executable is. npm may have skipped the wrapper's install script, so the binary
 * is looked up directly in the platform package (`@foundry-rs/anvil-<os>-<arch>`), then where the
 * wrapper's script would have put it, then on PATH; the wrapper's own bin script is the last resort.
 */
export function locateAnvil(): Launch {
  const require = createRequire(import.meta.url);
  const arch = ARCH_NAMES[process.arch];
  const candidates: string[] = [];
  if (arch !== undefined) {
    try {
      const platformPackage = `@foundry-rs/anvil-${process.platform}-${arch}/package.json`;
      candidates.push(join(dirname(require.resolve(platformPackage)), 'bin', executableName));
    } catch {
      // The optional dependency is missing for this platform; try the other places.
    }
  }
  let wrapperDir: string | undefined;
  try {
    wrapperDir = dirname(require.resolve('@foundry-rs/anvil/package.json'));
    candidates.push(join(wrapperDir, executableName), join(wrapperDir, '..', 'dist', executableName));
  } catch {
    wrapperDir = undefined;
  }
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (directory !== '') candidates.push(join(directory, executableName));
  }
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found !== undefined) return { command: found, args: [] };
  if (wrapperDir !== undefined && existsSync(join(wrapperDir, 'bin.mjs'))) {
    return { command: process.execPath, args: [join(wrapperDir, 'bin.mjs')] };
  }
  throw new AnvilError(
    'Cannot find the anvil executable: install the @foundry-rs/anvil npm package (npm install), ' +
      'or set CHAIN_RPC_URL to a running node, or CHAIN=0 to run without the local chain.',
  );
}

const SETPRIV = '/usr/bin/setpriv';

/** On Linux, `setpriv --pdeathsig SIGKILL` makes the kernel kill anvil when we die (it then execs anvil, same pid). */
function guarded(launch: Launch): Launch {
  if (process.platform !== 'linux' || !existsSync(SETPRIV)) return launch;
  return { command: SETPRIV, args: ['--pdeathsig', 'SIGKILL', '--', launch.command, ...launch.args] };
}

// Every node this process started, so that an exiting process kills what it did not stop.
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

function waitForListening(child: ChildProcess, stderrTail: () => string, timeoutMs: number) {
  return new Promise<{ host: string; port: number }>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => fail(`anvil did not start listening within ${timeoutMs} ms.`), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffered = (buffered + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS);
      const [, host, port] = LISTENING_LINE.exec(buffered) ?? [];
      if (host === undefined || port === undefined) return;
      cleanup();
      resolve({ host, port: Number(port) });
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(`anvil exited before it listened (code ${code}, signal ${signal}). ${stderrTail()}`.trim());
    const onError = (error: Error) => fail(`anvil could not be started: ${error.message}`);
    function cleanup() {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    function fail(message: string) {
      cleanup();
      reject(new AnvilError(message));
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

/** Polls `eth_chainId` until the node answers; returns the chain id it reports. */
export async function waitForRpc(rpcUrl: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.timeout(Math.max(100, Math.min(2_000, deadline - Date.now()))),
      });
      const body = (await response.json()) as { result?: string };
      if (typeof body.result === 'string') return Number(BigInt(body.result));
      lastProblem = `unexpected answer ${JSON.stringify(body).slice(0, 200)}`;
    } catch (error) {
      lastProblem = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new AnvilError(
    `The node at ${rpcUrl} did not answer eth_chainId within ${timeoutMs} ms (${lastProblem}).`,
  );
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(child);
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      running.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts anvil on a free loopback port and resolves once it answers JSON-RPC. */
export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilNode> {
  const chainId = options.chainId ?? DEFAULT_CHAIN_ID;
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const launch = guarded(options.binaryPath ? { command: options.binaryPath, args: [] } : locateAnvil());
  const args = [...launch.args, '--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId)];
  installExitHook();
  const child = spawn(launch.command, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_CHARS);
  });
  const stopOnce = (() => {
    let stopping: Promise<void> | undefined;
    return () => {
      stopping ??= stopChild(child);
      return stopping;
    };
  })();
  try {
    const { host, port } = await waitForListening(child, () => stderr, timeoutMs);
    // anvil logs every call it serves; nobody reads that, but the pipe must keep flowing.
    child.stdout?.resume();
    const rpcUrl = `http://${host}:${port}`;
    const reported = await waitForRpc(rpcUrl, timeoutMs);
    if (reported !== chainId) throw new AnvilError(`anvil reports chain ${reported}, not ${chainId}.`);
    if (child.pid === undefined) throw new AnvilError('anvil started without a process id.');
    return { rpcUrl, chainId, pid: child.pid, stop: stopOnce };
  } catch (error) {
    await stopOnce();
    throw error;
  }
}
