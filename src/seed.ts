import { randomBytes } from 'node:crypto';
import { privateKeyToAccount } from 'viem/accounts';
import { completeProof, createAccount, startProof } from './features/accounts/index.ts';
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
  /** The proven USDC account on the local chain, when the server runs one. */
  wallet?: { accountId: string; address: string } | undefined;
};

/**
 * Anvil's second development account (its well-known test mnemonic): the demo space's pay-to
 * address on the local chain. Everybody knows this key, which is the point: the demo's income can
 * be inspected and moved with any wallet. It is never used off the local chain.
 */
const DEMO_PAY_TO_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

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
      webhookAllowList: runtime.config.webhookAllowList,
    },
    user.id,
    space.id,
    { name: 'Demo key', scopes: [...SCOPES], push_source: 'demo', lifetime_days: 365 },
  );
  const wallet = runtime.chain?.local ? await seedWallet(runtime, user.id, space.id, key) : undefined;
  return {
    email: DEMO_EMAIL,
    password,
    spaceId: space.id,
    key: key.key,
    webhookSecret: key.webhook_secret,
    wallet,
  };
}

/** A USDC account on the local chain whose address is proven the way an owner proves one. */
async function seedWallet(
  runtime: Runtime,
  userId: string,
  spaceId: string,
  key: { id: string; scopes: string[] },
) {
  const { db } = runtime.database;
  const signer = privateKeyToAccount(DEMO_PAY_TO_KEY);
  const caller = { keyId: key.id, spaceId, issuerUserId: userId, scopes: [...SCOPES], pushSourceId: null };
  const account = await db.transaction().execute((tx) =>
    createAccount(tx, runtime.clock, caller, {
      kind: 'crypto',
      name: 'Demo wallet (local USDC)',
      currency: 'USDC',
      network: 'local',
      address: signer.address,
    }),
  );
  const deps = { db, clock: runtime.clock };
  const { message } = await startProof(deps, userId, spaceId, account.id);
  await completeProof(deps, userId, spaceId, account.id, await signer.signMessage({ message }));
  return { accountId: account.id, address: signer.address };
}

export function describeDemo(demo: DemoCredentials, publicUrl: string): string {
  return [
    '',
    'Tollbook demo space created. These secrets are shown once; keep them.',
    `  Web app:         ${publicUrl}/app  (log in with the next line)`,
    `  App login:       ${demo.email} / ${demo.password}`,
    `  Space id:        ${demo.spaceId}`,
    `  Integration key: ${demo.key}`,
    `  Webhook secret:  ${demo.webhookSecret}`,
    `  Try it:          curl -H "Authorization: Bearer ${demo.key}" ${publicUrl}/integration/ping`,
    ...(demo.wallet
      ? [
          `  USDC account:    ${demo.wallet.accountId} (pays to ${demo.wallet.address}, proven)`,
          `  Price a call:    curl -H "Authorization: Bearer ${demo.key}" -H 'content-type: application/json' -d '{"account_id":"${demo.wallet.accountId}","amount":"2"}' ${publicUrl}/integration/payment-requests`,
        ]
      : []),
    `  API docs:        ${publicUrl}/docs`,
    '',
  ].join('\n');
}
