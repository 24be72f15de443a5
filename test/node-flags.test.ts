import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serverNodeFlags } from '../bin/node-flags.mjs';

// The server's node flags have one place, package.json's start script; every other start of the
// server reads them through bin/node-flags.mjs. These tests fail when a start names a heap flag of
// its own or stops reading them.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HEAP_FLAG = /--max-(semi|old)-space-size/;

/** Every tracked-looking file under these folders (no dependencies, no build output). */
function filesUnder(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(path.join(ROOT, folder))) {
    const relative = path.join(folder, name);
    if (statSync(path.join(ROOT, relative)).isDirectory()) found.push(...filesUnder(relative));
    else found.push(relative);
  }
  return found;
}

describe('the server’s node flags', () => {
  it('are the start script’s flags before its first --import', () => {
    const start = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start as string;
    const flags = serverNodeFlags();
    expect(flags.length).toBeGreaterThan(0);
    expect(start.startsWith(`tsx ${flags.join(' ')} --import `)).toBe(true);
    expect(flags.every((flag) => flag.startsWith('--'))).toBe(true);
  });

  it('are printed on one line by the command, for shells', () => {
    const printed = execFileSync(process.execPath, [path.join(ROOT, 'bin/node-flags.mjs')], {
      encoding: 'utf8',
    });
    expect(printed).toBe(`${serverNodeFlags().join(' ')}\n`);
  });

  it('refuse a start script of another shape rather than guess', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'tollbook-flags-'));
    writeFileSync(
      path.join(root, 'package.json'),
      JSON.stringify({ scripts: { start: 'node dist/main.js' } }),
    );
    expect(() => serverNodeFlags(root)).toThrow(/start script/);
  });

  it('are read, not repeated, by the container, the smoke pass, CI and the benches', () => {
    const starts = ['Dockerfile', 'scripts/production-smoke.sh', '.ci/run'];
    for (const file of starts)
      expect(readFileSync(path.join(ROOT, file), 'utf8')).toContain('bin/node-flags.mjs');
    const sources = [
      ...starts,
      ...filesUnder('scripts'),
      ...filesUnder('bench'),
      ...filesUnder('src'),
      ...filesUnder('bin'),
    ];
    const repeating = sources.filter((file) => HEAP_FLAG.test(readFileSync(path.join(ROOT, file), 'utf8')));
    expect(repeating).toEqual([]);
  });
});
