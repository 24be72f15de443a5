import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli.ts';

// The command's conventions: help and --version answer on standard output with exit 0; unknown
// input answers the usage on standard error with exit 2. None of these opens a database. Most
// cases call main() in this process (each spawn costs a start-up); the spawned ones prove the
// bin turns main()'s answer into the process's exit code.

type Outcome = { code: number; stdout: string; stderr: string };

function tollbook(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/tollbook.mjs', ...args],
      { env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', REDIS_URL: '', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

/** Runs main() here, capturing what it writes. */
async function inProcess(args: string[]): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    return { code: await main(args), stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the tollbook command line', () => {
  it('answers --help, -h, help and no command with the usage and exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const out = await inProcess(args);
      expect(out.code, args.join(' ')).toBe(0);
      expect(out.stdout).toMatch(/^Usage: tollbook <command>/);
      expect(out.stdout).toContain('doctor [--timeout SECONDS]');
      expect(out.stderr).toBe('');
    }
  }, 10_000);

  it("answers `help <command>` and `<command> --help` with that command's usage and exit 0", async () => {
    for (const args of [
      ['help', 'keys', 'issue'],
      ['keys', 'issue', '--help'],
      ['keys', 'issue', '-h'],
    ]) {
      const out = await inProcess(args);
      expect(out.code, args.join(' ')).toBe(0);
      expect(out.stdout).toMatch(/^Usage: tollbook keys issue --space ID/);
    }
    const doctor = await inProcess(['doctor', '--help']);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/^Usage: tollbook doctor \[--timeout SECONDS\]/);
  }, 10_000);

  it('answers --version with the package version and exit 0', async () => {
    const out = await inProcess(['--version']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^tollbook \d+\.\d+\.\d+\n$/);
  }, 10_000);

  it('refuses unknown commands, options and arguments with the usage on standard error and exit 2', async () => {
    const cases: [string[], string][] = [
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['keys'], 'unknown command "keys"'],
      [['help', 'frobnicate'], 'unknown command "frobnicate"'],
      [['migrate', 'now'], 'unexpected argument "now" after migrate'],
      [['migrate', '--frobnicate'], "Unknown option '--frobnicate'"],
      [['doctor', '--timeout', 'soon'], '--timeout must be a number of seconds'],
    ];
    for (const [args, problem] of cases) {
      const out = await inProcess(args);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toContain(problem);
      expect(out.stderr).toContain('Usage: tollbook <command>');
    }
  }, 10_000);

  it("exits the process with main()'s code: 0 for --version, 2 for an unknown command", async () => {
    expect((await tollbook(['--version'])).code).toBe(0);
    const unknown = await tollbook(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Usage: tollbook <command>');
  }, 300_000);

  it('runs doctor: one line per check, exit 1 when a check fails (no database here yet)', async () => {
    const out = await tollbook(['doctor', '--timeout', '2'], {
      DATA_DIR: mkdtempSync(join(tmpdir(), 'tollbook-doctor-cli-')),
    });
    expect(out.code).toBe(1);
    const lines = out.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^FAIL {2}database {4}no embedded database at .*\(fix: run `tollbook migrate`/);
    expect(lines.at(-1)).toBe('2 check(s) failed.');
  }, 300_000);
});
