#!/usr/bin/env node
// The node flags the server runs with (its heap's bounds: operations.md says why). Their one
// place is package.json's `start` script, `tsx <flags> --import ./src/telemetry.ts src/main.ts`;
// every other start of the server reads them through this module: the container's command and
// the production smoke pass (`node bin/node-flags.mjs` prints them), CI's start under another
// node, and the benches. Run as a command, it prints them on one line.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The flags between `tsx` and the first `--import` of package.json's start script. */
export function serverNodeFlags(root = ROOT) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const words = String(manifest.scripts?.start ?? '')
    .split(' ')
    .filter(Boolean);
  const end = words.indexOf('--import');
  if (words[0] !== 'tsx' || end < 1 || words.at(-1) !== 'src/main.ts')
    throw new Error("package.json's start script is no longer `tsx <node flags> --import ... src/main.ts`");
  const flags = words.slice(1, end);
  for (const flag of flags) if (!flag.startsWith('--')) throw new Error(`not a node flag: ${flag}`);
  return flags;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.stdout.write(`${serverNodeFlags().join(' ')}\n`);
