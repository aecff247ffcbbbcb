/**
 * scripts/sign-request.ts as an agent author uses it (docs/signatures.md): keygen writes the
 * private key and registers the public one, the gateway started with that registry accepts
 * what the script signs and sends, and a printed signature used twice is a replay.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { AGENT, ORDERS, post, validOrder } from './support/agent.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const script = async (...args: string[]) => {
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/sign-request.ts', ...args], {
      cwd: root,
    });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: `${e.stdout}${e.stderr}` };
  }
};

const dir = mkdtempSync(join(tmpdir(), 'ac-sign-script-'));
const keys = join(dir, 'agent-keys.json');
const edKey = join(dir, 'agent-ed25519.pem');
const ecKey = join(dir, 'agent-es256.pem');
let sys: TestSystem;

beforeAll(async () => {
  const ed = await script('keygen', '--id', AGENT, '--key', edKey, '--keys', keys);
  expect(ed.code, ed.out).toBe(0);
  const ec = await script(
    'keygen',
    '--alg',
    'es256',
    '--id',
    `${AGENT}/es256`,
    '--key',
    ecKey,
    '--keys',
    keys,
  );
  expect(ec.code, ec.out).toBe(0);
  sys = await startEmbedded({ AGENT_SIGNATURE_KEYS: keys, TRUSTED_PROXIES: '192.0.2.1' });
}, 120_000);
afterAll(() => sys?.close());

describe('npm run sign-request', () => {
  it('keygen registers public keys only and keeps the private key private', () => {
    const registry = JSON.parse(readFileSync(keys, 'utf8')) as Record<
      string,
      { keys: Record<string, string>[] }
    >;
    expect(Object.keys(registry)).toEqual([AGENT, `${AGENT}/es256`]);
    expect(registry[AGENT]?.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(registry[`${AGENT}/es256`]?.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256' });
    for (const set of Object.values(registry)) expect(set.keys[0]?.d).toBeUndefined();
    expect(statSync(edKey).mode & 0o077).toBe(0);
  });

  it.each([
    ['Ed25519', () => edKey],
    ['ES256', () => ecKey],
  ])('signs and sends an order the gateway accepts (%s)', async (_alg, key) => {
    const r = await script(
      '--key',
      key(),
      '--url',
      `${sys.url}${ORDERS}`,
      '--data',
      JSON.stringify(validOrder()),
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^201 /);
    expect(r.out).toMatch(/"status":"APPROVED"/);
  });

  it('prints headers that work once, and are a replay the second time', async () => {
    const body = JSON.stringify(validOrder());
    const r = await script('--key', edKey, '--url', `${sys.url}${ORDERS}`, '--data', body, '--print');
    expect(r.code, r.out).toBe(0);
    const headers = Object.fromEntries(
      r.out
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
    );
    expect(Object.keys(headers).sort()).toEqual([
      'content-digest',
      'content-type',
      'signature',
      'signature-input',
    ]);
    expect((await post(sys.url, { spiffe: null, body, headers })).status).toBe(201);
    const again = await post(sys.url, { spiffe: null, body, headers });
    expect(again.status).toBe(401);
    expect(again.json.signature_error).toBe('replayed-nonce');
  });

  it('exits 1 and shows the problem when the gateway refuses', async () => {
    const r = await script('--key', edKey, '--url', `${sys.url}${ORDERS}`, '--data', '{"agent_id":1}');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^422 /);
  });
});
