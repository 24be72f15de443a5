#!/usr/bin/env node
// Completes package-lock.json with the platform packages a registry mirror may not serve.
//
// Tools such as Biome and anvil ship their binary as one optional package per platform. Where
// the registry in use lacks the other platforms' packages, `npm install` leaves them out of the
// lockfile, and `npm ci` then refuses the lockfile as out of sync. This adds an entry for each
// missing optional dependency, marked with the os/cpu/libc its name states, so `npm ci` skips it
// on other platforms and installs it (from a registry that has it) on its own. Run it after
// changing dependencies: `npm run lock:platforms`.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));

function platformOf(name) {
  const os = ['android', 'darwin', 'win32', 'linux', 'freebsd', 'openbsd', 'sunos', 'aix'].find((word) =>
    name.includes(word),
  );
  const cpu = name.includes('arm64')
    ? 'arm64'
    : /x64|amd64/.test(name)
      ? 'x64'
      : name.includes('ia32')
        ? 'ia32'
        : undefined;
  const libc = name.endsWith('-musl') ? 'musl' : os === 'linux' ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target] || !/^\d+\.\d+\.\d+/.test(range)) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!os || !cpu) continue;
    lock.packages[target] = {
      version: range,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(libc ? { libc: [libc] } : {}),
    };
    added += 1;
    process.stdout.write(`added ${name}@${range} (for ${key})\n`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`${added} platform entries added\n`);
