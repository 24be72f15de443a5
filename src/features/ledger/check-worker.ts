import { parentPort, workerData } from 'node:worker_threads';
import { defined } from '../../core/assert.ts';
import { openDatabase } from '../../platform/db/database.ts';
import { migrate } from '../../platform/db/migrate.ts';
import { checkLedger, type LedgerReport } from './check.ts';
import type { CheckThreadInput } from './check-thread.ts';

// The ledger check's worker thread (started by check-thread.ts): opens the database as every
// command does (migrating it), checks, closes the database, then posts the report. An error
// ends the thread uncaught, and the starter reports it.

const input = workerData as CheckThreadInput;
const database = await openDatabase(input.database);
let report: LedgerReport;
try {
  await migrate(database);
  report = await checkLedger(database.db, input.spaceId);
} finally {
  await database.close();
}
defined(parentPort, 'the parent of the ledger check thread').postMessage(report);
