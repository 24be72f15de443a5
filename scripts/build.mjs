#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ with tsc (one .js file per source file, the same tree),
// then copies the files the code reads beside itself (the web assets). dist/ mirrors src/ at the
// same depth, so paths the code builds from import.meta.url (../../../migrations,
// ../../../contracts/build) resolve to the same files from either tree.
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src');
const target = join(root, 'dist');

rmSync(target, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

/** Every `assets` directory under src/, copied to the same place under dist/. */
function copyAssets(directory) {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (!statSync(path).isDirectory()) continue;
    if (name === 'assets') cpSync(path, join(target, relative(source, path)), { recursive: true });
    else copyAssets(path);
  }
}
copyAssets(source);
process.stdout.write(`build: ${relative(root, target)}/ is ready (start it with node dist/main.js)\n`);
