import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/config.ts';

describe('configuration', () => {
  it('starts on embedded defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.DATABASE_URL).toBeUndefined();
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
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration:\\n  ${name}:`));
  });
});
