import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createRuntime } from '../src/runtime.ts';

// Prints the OpenAPI document the server serves at /openapi.json (or writes it to the path given),
// built from the routes' own schemas on a throwaway in-memory database. The document is the same
// whatever the database; only `servers` follows PUBLIC_URL.

/** Builds the app once and returns its document as JSON text. */
export async function renderOpenApiDocument(): Promise<string> {
  const config = loadConfig({
    NODE_ENV: 'development',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: '0'.repeat(64),
    PUBLIC_URL: 'https://books.tollbook.dev',
  });
  const runtime = await createRuntime(config, { logger: false });
  const app = await buildApp(runtime);
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await runtime.close();
  return text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await renderOpenApiDocument();
  const target = process.argv[2];
  if (target) writeFileSync(target, text);
  else process.stdout.write(text);
}
