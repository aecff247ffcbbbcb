import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/config.ts';

describe('configuration', () => {
  it('starts on embedded defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.CATALOG_REMEMBER_MS).toBe(30_000);
  });

  it('sheds with fixed limits by default; the adaptive quote limit is asked for by name (issue 48)', () => {
    expect(loadConfig({}).SHED_ADAPTIVE_CLASSES).toEqual([]);
    expect(loadConfig({ SHED_ADAPTIVE_CLASSES: 'quote' }).SHED_ADAPTIVE_CLASSES).toEqual(['quote']);
    expect(loadConfig({ SHED_ADAPTIVE_CLASSES: 'none' }).SHED_ADAPTIVE_CLASSES).toEqual([]);
    expect(() => loadConfig({ SHED_ADAPTIVE_CLASSES: 'quotes' })).toThrow(ConfigError);
    // The busy stretch holds quotes by default, not orders (lib/http/busy-stretch.ts).
    expect(loadConfig({}).SHED_BUSY_STRETCH).toEqual(['quote']);
    expect(loadConfig({ SHED_BUSY_STRETCH: 'none' }).SHED_BUSY_STRETCH).toEqual([]);
    expect(loadConfig({ SHED_BUSY_STRETCH: 'quote,order' }).SHED_BUSY_STRETCH).toEqual(['quote', 'order']);
    expect(() => loadConfig({ SHED_BUSY_STRETCH: 'true' })).toThrow(ConfigError);
  });

  it('refuses the development gateway secret and the development caller key in production', () => {
    const message = (() => {
      try {
        loadConfig({ NODE_ENV: 'production' });
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(message).toMatch(/GATEWAY_SHARED_SECRET: in production/);
    expect(message).toMatch(/AUTH_JWKS_URL: in production/);
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        GATEWAY_SHARED_SECRET: 'short-but-16-chars',
        AUTH_JWKS_URL: 'https://idp.example/jwks',
      }),
    ).toThrow(/GATEWAY_SHARED_SECRET/);
    const ok = loadConfig({
      NODE_ENV: 'production',
      GATEWAY_SHARED_SECRET: 'x'.repeat(32),
      AUTH_JWKS_URL: 'https://idp.example/jwks',
    });
    expect(ok.NODE_ENV).toBe('production');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['REDIS_URL', 'not a url'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_CAPACITY', '0'],
    ['REDIS_CLUSTER_NODES', 'redis-0'],
    ['REDIS_CLUSTER_NODES', 'redis://redis-0:6379'],
    ['REDIS_KEY_PREFIX', 'ac{x}:'],
    ['REDIS_COMMAND_TIMEOUT_MS', '0'],
    ['GATEWAY_SHARED_SECRET', 'too-short'],
    ['SERVED_HOSTS', 'https://ops.example.com'],
    ['SERVED_HOSTS', 'ops.example.com:8443'],
    ['UCP_PROFILE_PORTS', '443,ssh'],
    ['UCP_PROFILE_PORTS', '70000'],
    ['UCP_PROFILE_FETCH_BUDGET_PER_SOURCE', '0'],
    ['UCP_PROFILE_FETCH_CONCURRENCY', '-1'],
    ['CATALOG_REMEMBER_MS', '0'],
    ['CATALOG_REMEMBER_MS', '30s'],
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(
      new RegExp(`^Invalid configuration:\\n  ${name}(\\.\\d+)?:`),
    );
  });

  it.each([
    [
      'a redis+cluster:// URL',
      { REDIS_URL: 'redis+cluster://r0:7000' },
      'redis+cluster://r0:7000',
      undefined,
    ],
    [
      'REDIS_CLUSTER=true',
      { REDIS_URL: 'redis://r0:7000', REDIS_CLUSTER: 'true' },
      'redis://r0:7000',
      undefined,
    ],
    [
      'REDIS_CLUSTER_NODES alone',
      { REDIS_CLUSTER_NODES: 'r0:7000, r1:7001' },
      'redis+cluster://r0:7000',
      ['r0:7000', 'r1:7001'],
    ],
    [
      'REDIS_CLUSTER_NODES with a URL for credentials and TLS',
      { REDIS_CLUSTER_NODES: 'r0:7000', REDIS_URL: 'rediss://u:p@r0:7000' },
      'rediss://u:p@r0:7000',
      ['r0:7000'],
    ],
  ])('selects Redis Cluster by %s', (_name, env, url, nodes) => {
    const c = loadConfig(env);
    expect(c.REDIS_CLUSTER).toBe(true);
    expect(c.REDIS_URL).toBe(url);
    expect(c.REDIS_CLUSTER_NODES).toEqual(nodes);
  });

  it('keeps a plain redis:// URL a single Redis', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).REDIS_CLUSTER).toBe(false);
  });
});
