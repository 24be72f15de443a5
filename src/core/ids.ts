// Identifiers shown to clients are UUIDs; secrets are prefixed base62 strings. The shapes are
// checked here so every edge agrees on what a well-formed key looks like.

declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type SpaceId = Brand<string, 'SpaceId'>;
export type UserId = Brand<string, 'UserId'>;
export type KeyId = Brand<string, 'KeyId'>;
export type AccountId = Brand<string, 'AccountId'>;
export type ContactId = Brand<string, 'ContactId'>;

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const SECRET_BODY_LENGTH = 43;

export const SECRET_PREFIX = {
  integrationKey: 'oit_',
  agentKey: 'oat_',
  session: 'ses_',
} as const;

const SECRET_SHAPE = /^[0-9A-Za-z]{43}$/;

/** True when `token` is `prefix` followed by exactly 43 base62 characters. */
export function hasSecretShape(token: string, prefix: string): boolean {
  return token.startsWith(prefix) && SECRET_SHAPE.test(token.slice(prefix.length));
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(text: string): boolean {
  return UUID_SHAPE.test(text);
}
