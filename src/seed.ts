import { randomBytes } from 'node:crypto';
import { issueKey } from './features/keys/index.ts';
import { createSpace } from './features/spaces/index.ts';
import { createUser } from './features/users/index.ts';
import { SCOPES } from './platform/http/context.ts';
import type { Runtime } from './runtime.ts';

export const DEMO_EMAIL = 'demo@tollbook.local';

export type DemoCredentials = {
  email: string;
  password: string;
  spaceId: string;
  key: string;
  webhookSecret: string;
};

/**
 * On an empty database, creates a demo owner, space and key so the first `npm start` can be
 * called at once. Returns undefined when anyone has signed up already.
 */
export async function seedDemo(runtime: Runtime): Promise<DemoCredentials | undefined> {
  const { db } = runtime.database;
  const anyone = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (anyone) return undefined;
  const password = randomBytes(12).toString('base64url');
  const user = await createUser(
    { db, clock: runtime.clock },
    { email: DEMO_EMAIL, password, name: 'Demo owner' },
  );
  const space = await createSpace({ db, clock: runtime.clock, authStamps: runtime.authStamps }, user.id, {
    name: 'Demo space',
    base_currency: 'USD',
    plan: 'pro',
  });
  const key = await issueKey(
    {
      db,
      clock: runtime.clock,
      secrets: runtime.secrets,
      authStamps: runtime.authStamps,
      resolver: runtime.resolver,
      webhookAllowPrivate: runtime.config.webhookAllowPrivate,
    },
    user.id,
    space.id,
    { name: 'Demo key', scopes: [...SCOPES], push_source: 'demo', lifetime_days: 365 },
  );
  return { email: DEMO_EMAIL, password, spaceId: space.id, key: key.key, webhookSecret: key.webhook_secret };
}

export function describeDemo(demo: DemoCredentials, publicUrl: string): string {
  return [
    '',
    'Tollbook demo space created. These secrets are shown once; keep them.',
    `  App login:       ${demo.email} / ${demo.password}`,
    `  Space id:        ${demo.spaceId}`,
    `  Integration key: ${demo.key}`,
    `  Webhook secret:  ${demo.webhookSecret}`,
    `  Try it:          curl -H "Authorization: Bearer ${demo.key}" ${publicUrl}/integration/ping`,
    `  API docs:        ${publicUrl}/docs`,
    '',
  ].join('\n');
}
