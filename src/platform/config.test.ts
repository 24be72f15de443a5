import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('has defaults that need nothing set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      publicUrl: 'http://localhost:8080',
      dataDir: './data',
      databaseUrl: undefined,
      rateLimitPerMinute: 240,
      production: false,
      demo: true,
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ MASTER_KEY: 'short' }, 'MASTER_KEY'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ WEBHOOK_ALLOW_PRIVATE: 'maybe' }, 'WEBHOOK_ALLOW_PRIVATE'],
    [{ WEBHOOK_ALLOW_ADDRESSES: '127.0.0.1' }, 'WEBHOOK_ALLOW_ADDRESSES'],
    [{ WEBHOOK_ALLOW_ADDRESSES: '10.0.0.0/8,,' }, 'WEBHOOK_ALLOW_ADDRESSES'],
    [{ NODE_ENV: 'production' }, 'MASTER_KEY'],
    [
      { NODE_ENV: 'production', MASTER_KEY: 'a'.repeat(64), WEBHOOK_ALLOW_PRIVATE: '1' },
      'WEBHOOK_ALLOW_PRIVATE',
    ],
  ])('refuses %j with a sentence naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^${name}[ =]`));
  });

  it('keeps the operator allow list of webhook ranges in production, unlike the development switch', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      MASTER_KEY: 'a'.repeat(64),
      WEBHOOK_ALLOW_ADDRESSES: '127.0.0.1/32, 10.0.5.0/24',
    });
    expect(config.webhookAllowList).toEqual(['127.0.0.1/32', '10.0.5.0/24']);
    expect(config.webhookAllowPrivate).toBe(false);
    expect(loadConfig({}).webhookAllowList).toEqual([]);
  });

  it('turns the demo off in production and trims a trailing slash off PUBLIC_URL', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      MASTER_KEY: 'a'.repeat(64),
      PUBLIC_URL: 'https://pay.example.com/',
    });
    expect(config.demo).toBe(false);
    expect(config.publicUrl).toBe('https://pay.example.com');
  });
});
