#!/usr/bin/env node
// The `tollbook` command. A development install (tsx present) runs the TypeScript sources, so
// the command works from a checkout without a build; a production install (`npm ci --omit=dev`,
// no tsx) runs the build in dist/ (`npm run build`).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

function tsxInstalled() {
  try {
    require.resolve('tsx/esm/api');
    return true;
  } catch {
    return false;
  }
}

let entry;
if (tsxInstalled() && process.env.NODE_ENV !== 'production') {
  const { register } = await import('tsx/esm/api');
  register();
  entry = join(here, '..', 'src', 'cli.ts');
} else {
  entry = join(here, '..', 'dist', 'cli.js');
  if (!existsSync(entry)) {
    process.stderr.write('tollbook: dist/cli.js is missing; run `npm run build` first.\n');
    process.exit(2);
  }
}
const { main } = await import(pathToFileURL(entry).href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
