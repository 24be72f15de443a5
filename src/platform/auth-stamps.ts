import type { Redis } from 'ioredis';

// A space's auth_version column changes in the same transaction as anything that can stop a key
// (revocation, a member's role or removal, a rollout switch). With Redis, processes cache keys in
// memory and compare the version they loaded with a stamp in Redis, read in the same round trip
// as the rate counter. A change writes the new stamp after commit (overwriting); a process that
// loaded a key only sets the stamp when it is missing. So a stale loader never overwrites a newer
// stamp, and a Redis that lost its data just makes every process reload from PostgreSQL.

export interface AuthStamps {
  readonly enabled: boolean;
  key(spaceId: string): string;
  publish(spaceId: string, version: number): Promise<void>;
  seed(spaceId: string, version: number): Promise<void>;
}

export const noAuthStamps: AuthStamps = {
  enabled: false,
  key: (spaceId) => `tb:auth:${spaceId}`,
  publish: async () => {},
  seed: async () => {},
};

export function createRedisAuthStamps(redis: Redis): AuthStamps {
  const key = (spaceId: string) => `tb:auth:${spaceId}`;
  return {
    enabled: true,
    key,
    publish: async (spaceId, version) => {
      // Only ever move forward, even if two changes publish out of order.
      await redis.eval(
        "local c = tonumber(redis.call('GET', KEYS[1]) or '0') if tonumber(ARGV[1]) > c then redis.call('SET', KEYS[1], ARGV[1]) end return 1",
        1,
        key(spaceId),
        String(version),
      );
    },
    seed: async (spaceId, version) => {
      await redis.set(key(spaceId), String(version), 'NX');
    },
  };
}
