/**
 * Issue 46, item 3: the gateway's shared secret opens the subgraphs' and the internal endpoints'
 * gateway-only doors. It had a published default, so on a default `npm start` anyone could
 * release another customer's one-use coupon on the public port. Unset, it is now random at each
 * start (the embedded process shares it in memory); the former default is refused wherever it is
 * set; processes of the distributed topology refuse to start without one they all share
 * (README, "Configuration"; docs/deployment.md).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { GATEWAY_SECRET_HEADER } from '../../lib/auth/shared-secret.ts';
import { ConfigError, loadConfig, requireSharedSecret } from '../../lib/config.ts';

const FORMER_DEFAULT = 'dev-only-gateway-secret-change-me';
const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

describe('a default embedded system (no secret configured)', () => {
  let sys: TestSystem;
  let redeemer: string;
  beforeAll(async () => {
    sys = await startEmbedded();
    redeemer = await sys.token(['promotions:redeem']);
  });
  afterAll(() => sys?.close());

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${sys.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const redeem = (orderId: string) =>
    post(
      '/v1/promotions/redemptions',
      { orderId, customerId: 'cust-victim', promotionIds: ['WELCOME10'] },
      { authorization: `Bearer ${redeemer}` },
    );

  it("refuses the former default secret: another customer's one-use coupon stays spent", async () => {
    expect((await redeem('ord-victim-1')).status).toBe(201);
    expect((await redeem('ord-victim-2')).status).toBe(409);
    const release = await post(
      '/v1/promotions/redemptions/release',
      { orderId: 'ord-victim-1', customerId: 'cust-victim' },
      { [GATEWAY_SECRET_HEADER]: FORMER_DEFAULT },
    );
    expect(release.status).toBe(401);
    expect(release.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await redeem('ord-victim-3')).status).toBe(409);
  });

  it('runs on a secret of its own, made at start, that its own parts share in memory', async () => {
    expect(sys.config.gatewaySecretGenerated).toBe(true);
    expect(sys.config.GATEWAY_SHARED_SECRET).not.toBe(FORMER_DEFAULT);
    expect(sys.config.GATEWAY_SHARED_SECRET.length).toBeGreaterThanOrEqual(32);
    const release = await post(
      '/v1/promotions/redemptions/release',
      { orderId: 'ord-victim-1', customerId: 'cust-victim' },
      { [GATEWAY_SECRET_HEADER]: sys.config.GATEWAY_SHARED_SECRET },
    );
    expect(release.status).toBe(200);
  });
});

describe('the secret in the configuration', () => {
  it('is a new random value at each start when none is set, and the one set otherwise', () => {
    const a = loadConfig({});
    const b = loadConfig({});
    expect(a.GATEWAY_SHARED_SECRET).not.toBe(b.GATEWAY_SHARED_SECRET);
    expect([a.gatewaySecretGenerated, b.gatewaySecretGenerated]).toEqual([true, true]);
    const set = loadConfig({ GATEWAY_SHARED_SECRET: 'a-secret-someone-chose-0123456789' });
    expect([set.GATEWAY_SHARED_SECRET, set.gatewaySecretGenerated]).toEqual([
      'a-secret-someone-chose-0123456789',
      false,
    ]);
  });

  it.each(['development', 'test', 'production'])(
    'refuses the former published default in %s, naming the variable',
    (env) => {
      expect(() => loadConfig({ NODE_ENV: env, GATEWAY_SHARED_SECRET: FORMER_DEFAULT })).toThrow(
        /GATEWAY_SHARED_SECRET: this is the former published development default/,
      );
    },
  );

  it('lets a distributed process start only with a configured secret', () => {
    expect(() => requireSharedSecret(loadConfig({}), 'the pricing subgraph')).toThrow(ConfigError);
    expect(() => requireSharedSecret(loadConfig({}), 'the pricing subgraph')).toThrow(
      /GATEWAY_SHARED_SECRET: the distributed topology's processes must share one secret/,
    );
    expect(() =>
      requireSharedSecret(loadConfig({ GATEWAY_SHARED_SECRET: 'x'.repeat(32) }), 'the gateway'),
    ).not.toThrow();
  });

  it('stops a subgraph process started without one: exit code 2 naming the variable', async () => {
    const compiled =
      process.env.TEST_COMPILED === '1' && existsSync(join(root, 'dist/subgraphs/pricing/main.js'));
    const args = compiled
      ? ['dist/subgraphs/pricing/main.js']
      : ['--import', 'tsx', 'subgraphs/pricing/main.ts'];
    const failed = await run(process.execPath, args, {
      cwd: root,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'ac-secret-')),
        PORT: '0',
        LOG_LEVEL: 'silent',
      },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(
      /GATEWAY_SHARED_SECRET: the distributed topology's processes must share one secret/,
    );
  }, 60_000);
});
