import { randomBytes } from 'node:crypto';
import pg from 'pg';

// A spawned command that needs a fresh database of its own, as on a first start. When the suite
// runs on PostgreSQL it gets a new database on the suite's server (dropped afterwards), so the
// command runs on the kind of database the pass is about; with embedded PGlite it gets none and
// makes its own in DATA_DIR, as a fresh install does.

export type CommandDatabase = {
  /** The DATABASE_URL to give the command: empty for embedded PGlite in DATA_DIR. */
  url: string;
  drop: () => Promise<void>;
};

async function onSuiteServer(suiteUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: suiteUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function freshCommandDatabase(): Promise<CommandDatabase> {
  const suiteUrl = process.env.DATABASE_URL;
  if (suiteUrl === undefined || suiteUrl === '') return { url: '', drop: async () => {} };
  const name = `tb_command_${randomBytes(6).toString('hex')}`;
  await onSuiteServer(suiteUrl, `CREATE DATABASE ${name}`);
  const url = new URL(suiteUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onSuiteServer(suiteUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
