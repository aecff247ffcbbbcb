/** Agent keys and signed requests for the HTTP message signature tests (a real signer). */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  publicJwk,
  type SignRequest,
  signAgentRequest,
} from '../../../gateway/agent/identity/signature/sign.ts';
import { ORDERS, post, type Reply, validOrder } from './agent.ts';

export const ed25519 = (): KeyObject => generateKeyPairSync('ed25519').privateKey;
export const p256 = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

/** Writes an AGENT_SIGNATURE_KEYS file: SPIFFE ID → JWK Set of the keys' public halves. */
export async function writeKeysFile(dir: string, entries: Record<string, KeyObject[]>): Promise<string> {
  const file: Record<string, { keys: unknown[] }> = {};
  for (const [id, keys] of Object.entries(entries))
    file[id] = { keys: await Promise.all(keys.map(async (k) => (await publicJwk(k)).jwk)) };
  const path = join(dir, 'agent-signature-keys.json');
  writeFileSync(path, JSON.stringify(file, null, 2));
  return path;
}

export type SignedPost = Omit<SignRequest, 'url' | 'method' | 'privateKey'> & {
  path?: string;
  method?: string;
  /** What is sent when it differs from what was signed (tampering). */
  send?: { path?: string; body?: string; headers?: Record<string, string> };
};

/** Signs a POST of `body` (default: a valid order) with `key`, then sends it, optionally altered. */
export async function signedPost(baseUrl: string, key: KeyObject, o: SignedPost = {}): Promise<Reply> {
  const body = o.body ?? JSON.stringify(validOrder());
  const path = o.path ?? ORDERS;
  const headers = await signAgentRequest({
    ...o,
    url: `${baseUrl}${path}`,
    method: o.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...o.headers },
    body,
    privateKey: key,
  });
  return post(baseUrl, {
    spiffe: null,
    path: o.send?.path ?? path,
    body: o.send?.body ?? body,
    headers: { ...headers, ...o.send?.headers },
  });
}
