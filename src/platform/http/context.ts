// What the edges attach to a request once they have established who is calling.
// Declared here (not in a feature) so every layer can read it without importing a feature.

export type Scope = 'payments' | 'invoices' | 'contacts' | 'accounts' | 'transactions' | 'chats';
export const SCOPES: readonly Scope[] = [
  'payments',
  'invoices',
  'contacts',
  'accounts',
  'transactions',
  'chats',
];

/** The caller of an /integration route: one key acting for its issuer inside one space. */
export type IntegrationCaller = {
  keyId: string;
  spaceId: string;
  issuerUserId: string;
  scopes: Scope[];
  pushSourceId: string | null;
};

/** The caller of an /app/api route: a signed-in person. */
export type SessionCaller = {
  userId: string;
  sessionId: string;
  csrfToken: string;
  viaCookie: boolean;
};

export type RouteAuth = { scope: Scope | 'any' };

declare module 'fastify' {
  interface FastifyRequest {
    integration: IntegrationCaller | null;
    session: SessionCaller | null;
  }
  interface FastifyContextConfig {
    /** The one scope an /integration route sits behind. */
    scope?: Scope | 'any';
    /** Marks a route that accepts an Idempotency-Key header. */
    idempotent?: boolean;
  }
}
