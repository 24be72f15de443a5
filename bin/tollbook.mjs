#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so the command works from a checkout without a build.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const here = dirname(fileURLToPath(import.meta.url));
const { main } = await import(pathToFileURL(join(here, '..', 'src', 'cli.ts')).href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
