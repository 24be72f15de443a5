// Compiles the Solidity sources under contracts/ with the solc npm package (a WebAssembly build:
// nothing is downloaded) and writes contracts/build/<Name>.json with the ABI and the creation
// bytecode. The output depends only on the sources, the pinned compiler and the settings below,
// so a rebuild is byte-identical; the files are checked in so that start-up needs no compiler.
//
//   npm run build:contracts          write the artifacts
//   npm run build:contracts -- --check   exit 1 when the checked-in artifacts are stale

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The contracts to build: source file (relative to the repository) and contract name. */
export const CONTRACTS = [
  { source: 'contracts/TestUSDC.sol', name: 'TestUSDC' },
  { source: 'contracts/LocalMulticall.sol', name: 'LocalMulticall' },
] as const;

/** Fixed so that every machine produces the same bytes; change them only together with a rebuild. */
export const COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'ipfs' },
} as const;

type SolcMessage = { severity: 'error' | 'warning' | 'info'; formattedMessage: string };
type SolcOutput = {
  errors?: SolcMessage[];
  contracts?: Record<
    string,
    Record<
      string,
      { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
    >
  >;
};

export class CompileError extends Error {}

/** Every artifact as `path relative to the repository → file text`, without touching the disk. */
export function compileContracts(root: string = ROOT): Map<string, string> {
  const sources: Record<string, { content: string }> = {};
  for (const contract of CONTRACTS) {
    sources[contract.source] = { content: readFileSync(join(root, contract.source), 'utf8') };
  }
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      ...COMPILER_SETTINGS,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const messages = output.errors ?? [];
  const problems = messages.filter((message) => message.severity !== 'info');
  if (problems.length > 0) {
    // Warnings fail the build too: the token is small enough to keep at zero warnings.
    throw new CompileError(problems.map((problem) => problem.formattedMessage).join('\n'));
  }
  const artifacts = new Map<string, string>();
  for (const contract of CONTRACTS) {
    const compiled = output.contracts?.[contract.source]?.[contract.name];
    if (!compiled) throw new CompileError(`solc produced no output for ${contract.name}.`);
    const artifact = {
      contractName: contract.name,
      sourceName: contract.source,
      compiler: `solc ${solc.version()}`,
      settings: COMPILER_SETTINGS,
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
      deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`,
    };
    artifacts.set(`contracts/build/${contract.name}.json`, `${JSON.stringify(artifact, null, 2)}\n`);
  }
  return artifacts;
}

/** Paths whose checked-in text differs from a fresh build (empty when up to date). */
export function staleArtifacts(root: string = ROOT): string[] {
  const stale: string[] = [];
  for (const [path, text] of compileContracts(root)) {
    let current: string | undefined;
    try {
      current = readFileSync(join(root, path), 'utf8');
    } catch {
      current = undefined;
    }
    if (current !== text) stale.push(path);
  }
  return stale;
}

function main(): void {
  if (process.argv.includes('--check')) {
    const stale = staleArtifacts();
    if (stale.length > 0) {
      process.stderr.write(`Stale contract artifacts (run npm run build:contracts): ${stale.join(', ')}\n`);
      process.exit(1);
    }
    process.stdout.write('Contract artifacts are up to date.\n');
    return;
  }
  for (const [path, text] of compileContracts()) {
    const target = join(ROOT, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`Wrote ${path}\n`);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main();
}
