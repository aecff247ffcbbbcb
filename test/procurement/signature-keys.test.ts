/**
 * AGENT_SIGNATURE_KEYS: the registry of agents' public keys. What it accepts, what stops the
 * process (with a message naming the entry), and that a key's id is its RFC 7638 thumbprint.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { loadAgentKeys, SignatureKeysError } from '../../gateway/agent/identity/signature/keys.ts';
import { startEmbedded } from '../../harness/system.ts';
import { ConfigError } from '../../lib/config.ts';
import { AGENT } from './support/agent.ts';

const dir = mkdtempSync(join(tmpdir(), 'ac-sig-keys-'));
let n = 0;
const file = (content: unknown): string => {
  const path = join(dir, `keys-${++n}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const jwkOf = (type: 'ed25519' | 'p256' | 'p384' | 'rsa') => {
  const pair =
    type === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : type === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ec', { namedCurve: type === 'p256' ? 'P-256' : 'P-384' });
  return { pub: pair.publicKey.export({ format: 'jwk' }), priv: pair.privateKey.export({ format: 'jwk' }) };
};

describe('the agent signature key registry', () => {
  it('registers Ed25519 and P-256 public keys under their SPIFFE IDs, keyed by JWK thumbprint', async () => {
    const ed = jwkOf('ed25519').pub;
    const ec = jwkOf('p256').pub;
    const keys = await loadAgentKeys(
      file({ [AGENT]: { keys: [ed] }, [`${AGENT}/b`]: { keys: [{ ...ec, alg: 'ES256' }] } }),
    );
    const edId = await calculateJwkThumbprint(ed as never, 'sha256');
    const ecId = await calculateJwkThumbprint(ec as never, 'sha256');
    expect(keys.get(edId)).toMatchObject({ spiffeId: AGENT, alg: 'ed25519' });
    expect(keys.get(ecId)).toMatchObject({ spiffeId: `${AGENT}/b`, alg: 'ecdsa-p256-sha256' });
    expect(keys.size).toBe(2);
  });

  it('is empty when AGENT_SIGNATURE_KEYS is unset', async () => {
    expect((await loadAgentKeys(undefined)).size).toBe(0);
  });

  const ed = jwkOf('ed25519');
  const bad: [string, unknown, RegExp][] = [
    ['a file that is not JSON', '{"spiffe://', /cannot read .* as JSON/],
    [
      'an ID that is not a SPIFFE ID',
      { 'https://example.org/agent': { keys: [ed.pub] } },
      /is not a SPIFFE ID/,
    ],
    ['a private key', { [AGENT]: { keys: [ed.priv] } }, /private key/],
    ['an RSA key', { [AGENT]: { keys: [jwkOf('rsa').pub] } }, /keys/],
    ['a P-384 key', { [AGENT]: { keys: [jwkOf('p384').pub] } }, /keys/],
    ['an empty key set', { [AGENT]: { keys: [] } }, /keys/],
    [
      'an alg that does not match the curve',
      { [AGENT]: { keys: [{ ...ed.pub, alg: 'ES256' }] } },
      /does not match/,
    ],
    [
      'a point that is not on the curve',
      { [AGENT]: { keys: [{ ...jwkOf('p256').pub, y: 'AAAA' }] } },
      /not a valid P-256/,
    ],
    [
      'one key for two identities',
      { [AGENT]: { keys: [ed.pub] }, [`${AGENT}/b`]: { keys: [ed.pub] } },
      /already registered for/,
    ],
  ];
  it.each(bad)('stops on %s, naming it', async (_label, content, message) => {
    const err = await loadAgentKeys(file(content)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignatureKeysError);
    expect((err as Error).message).toMatch(/^AGENT_SIGNATURE_KEYS: /);
    expect((err as Error).message).toMatch(message);
  });

  it('stops the system at start-up with a configuration error', async () => {
    const err = await startEmbedded({ AGENT_SIGNATURE_KEYS: file({ [AGENT]: { keys: [ed.priv] } }) }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/AGENT_SIGNATURE_KEYS/);
  }, 60_000);
});
