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

describe('GAS_WALLET_KEYS', () => {
  const key = (byte: string) => `0x${byte.repeat(32)}`;

  it('reads a comma-separated list of keys, one lane each, in order', () => {
    const config = loadConfig({ GAS_WALLET_KEYS: ` ${key('11')}, ${key('22')},${key('33')} ` });
    expect(config.gasWalletKeys).toEqual([key('11'), key('22'), key('33')]);
  });

  it('keeps GAS_WALLET_KEY working as one lane', () => {
    expect(loadConfig({ GAS_WALLET_KEY: key('11') }).gasWalletKeys).toEqual([key('11')]);
    expect(loadConfig({}).gasWalletKeys).toEqual([]);
  });

  it('refuses both variables at once', () => {
    expect(() => loadConfig({ GAS_WALLET_KEY: key('11'), GAS_WALLET_KEYS: key('22') })).toThrow(
      /GAS_WALLET_KEYS or GAS_WALLET_KEY, not both/,
    );
  });

  it('names a bad key by its position, never by its text', () => {
    const bad = `0x${'ab'.repeat(31)}zz`;
    let error: unknown;
    try {
      loadConfig({ GAS_WALLET_KEYS: `${key('11')},${bad},${key('33')}` });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('key 2 of 3');
    expect((error as Error).message).not.toContain(bad);
    expect((error as Error).message).not.toContain('abab');
  });

  it('refuses an empty entry and a key named twice', () => {
    expect(() => loadConfig({ GAS_WALLET_KEYS: `${key('11')},,${key('22')}` })).toThrow(/key 2 of 3/);
    expect(() => loadConfig({ GAS_WALLET_KEYS: `${key('11')},${key('11')}` })).toThrow(/twice/);
  });

  it('reads the replacement delay, the payer wait and the low-balance threshold', () => {
    const config = loadConfig({
      GAS_REPLACE_AFTER_SECONDS: '5',
      SETTLEMENT_WAIT_SECONDS: '7',
      GAS_LOW_WEI: '123',
    });
    expect(config).toMatchObject({ gasReplaceAfterMs: 5_000, settlementWaitMs: 7_000, gasLowWei: 123n });
    expect(loadConfig({})).toMatchObject({ gasReplaceAfterMs: 30_000, gasLowWei: 10n ** 16n });
    expect(() => loadConfig({ GAS_LOW_WEI: '0.5' })).toThrow(ConfigError);
  });
});
