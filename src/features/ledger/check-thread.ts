import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DatabaseOptions } from '../../platform/db/database.ts';
import type { LedgerReport } from './check.ts';

// `tollbook ledger check` runs the check in a worker thread whose heap is bounded. The check's
// live heap is small at any book size, but it allocates fast (every row of every batch is
// garbage once summed), and under V8's default limits, which follow the machine's memory, the
// young generation grows with the allocation rate and the old generation lets garbage pile up
// to about four times the live heap before a full collection: the peak memory then grows with
// the book. A worker's resource limits are the one bound the command can set for itself, since
// it runs in the process `node` started (a flag would have to be given by whoever starts it).
// Below 2 GB of old generation V8 lets the old generation grow by less than twice its live size
// between full collections, so the old generation's bound is what keeps the garbage small.

/** The worker's young generation, in MB. */
export const CHECK_YOUNG_GENERATION_MB = 12;

/**
 * The worker's old generation, in MB. It must hold the check's sums (one per tracked account and
 * income day) and the report, whose problems grow with the book. The report is printed as one
 * JSON string, which V8 caps at 2^29 - 24 characters, and the report takes at most about 1.6
 * bytes of heap per character of its JSON (docs/design/scale.md): any report the command can print
 * fits in about 830 MB, and the rest is left to the sums.
 */
export const CHECK_OLD_GENERATION_MB = 1536;

/** What the worker is given: where the database is (it opens it itself), and the scope. */
export type CheckThreadInput = {
  database: Pick<DatabaseOptions, 'databaseUrl' | 'dataDir' | 'poolSize'>;
  spaceId: string | undefined;
};

/** The check's thread ended without a report: it crashed, ran out of memory or could not read. */
export class CheckStopped extends Error {}

/**
 * Runs `checkLedger` in a worker thread that opens the database itself, migrates it as every
 * command does, checks and closes it before it answers; the caller must not hold the database
 * open meanwhile (embedded PGlite allows one opener of a data dir). Rejects with `CheckStopped`
 * unless the thread answered a report and exited cleanly.
 */
export function checkLedgerInThread(input: CheckThreadInput): Promise<LedgerReport> {
  // The entry beside this module, in its language: check-worker.js in the build, check-worker.ts
  // when the sources run through tsx. A worker inherits the flags node was started with, but not
  // loader hooks registered at run time (as bin/tollbook.mjs registers tsx's), so a worker that
  // runs sources is given tsx's hooks by flag, and only them: flags given explicitly to a worker
  // may not include V8's (a heap bound, which whoever starts node may have given).
  const here = import.meta.url;
  const fromSources = extname(fileURLToPath(here)) === '.ts';
  const worker = new Worker(new URL(fromSources ? './check-worker.ts' : './check-worker.js', here), {
    workerData: input,
    resourceLimits: {
      maxYoungGenerationSizeMb: CHECK_YOUNG_GENERATION_MB,
      maxOldGenerationSizeMb: CHECK_OLD_GENERATION_MB,
    },
    ...(fromSources ? { execArgv: ['--import', import.meta.resolve('tsx')] } : {}),
  });
  return new Promise((resolve, reject) => {
    let report: LedgerReport | undefined;
    let failure: Error | undefined;
    worker.on('message', (message: LedgerReport) => {
      report = message;
    });
    worker.on('error', (error: Error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      if (report !== undefined && failure === undefined && code === 0) return resolve(report);
      const reason = failure?.message ?? `its thread exited with code ${code} without a report`;
      reject(new CheckStopped(`the ledger check stopped before it finished: ${reason}`));
    });
  });
}
