import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/config.ts';

describe('configuration', () => {
  it('starts on embedded defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.DATABASE_URL).toBeUndefined();
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
