#!/usr/bin/env node
// `npm run lint:packages`: builds packages/* and checks each as it would be published: publint
// (package.json fields against the files the tarball holds) and @arethetypeswrong/cli (the
// types resolve for every ESM resolution mode; the packages are ESM only, hence that profile).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

function run(command, args, cwd = root) {
  process.stdout.write(`lint:packages: ${[command.split('/').at(-1), ...args].join(' ')}\n`);
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run('npm', ['run', 'packages:build', '--silent']);
for (const name of readdirSync(join(root, 'packages')).sort()) {
  const directory = join(root, 'packages', name);
  run(bin('publint'), ['--strict', directory]);
  run(bin('attw'), ['--pack', directory, '--profile', 'esm-only']);
}
