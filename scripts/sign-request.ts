/**
 * An agent's side of RFC 9421 request signing (Web Bot Auth profile), for trying the gateway
 * and as a reference for agent authors (docs/signatures.md):
 *
 *   npm run sign-request -- keygen --id <SPIFFE ID> --key agent-key.pem --keys agent-keys.json [--alg ed25519|es256]
 *       makes a key pair, writes the private key (PKCS #8 PEM, mode 0600) and adds the public
 *       JWK under the SPIFFE ID to the AGENT_SIGNATURE_KEYS file; prints the keyid.
 *   npm run sign-request -- --key agent-key.pem --url <URL> [--method POST] [--data <JSON>]
 *       [--header 'name: value']… [--signature-agent '"https://…"'] [--print]
 *       signs the request and sends it (prints the status line and body; exit 1 unless 2xx),
 *       or with --print only prints the signed headers, one `name: value` a line.
 */
import '../lib/source-maps.ts';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { publicJwk, signAgentRequest } from '../gateway/agent/identity/signature/sign.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    id: { type: 'string' },
    key: { type: 'string' },
    keys: { type: 'string' },
    alg: { type: 'string', default: 'ed25519' },
    url: { type: 'string' },
    method: { type: 'string' },
    data: { type: 'string' },
    header: { type: 'string', multiple: true, default: [] },
    'signature-agent': { type: 'string' },
    print: { type: 'boolean', default: false },
  },
});

function usage(message: string): never {
  console.error(`${message}\n(see the comment at the top of scripts/sign-request.ts or docs/signatures.md)`);
  process.exit(2);
}

async function keygen() {
  if (!values.id || !values.key || !values.keys) usage('keygen needs --id, --key and --keys');
  if (values.alg !== 'ed25519' && values.alg !== 'es256') usage('--alg is ed25519 or es256');
  const { privateKey } =
    values.alg === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  writeFileSync(values.key, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  const registry = existsSync(values.keys)
    ? (JSON.parse(readFileSync(values.keys, 'utf8')) as Record<string, { keys: unknown[] }>)
    : {};
  const { jwk, keyid } = await publicJwk(privateKey);
  registry[values.id] = { keys: [...(registry[values.id]?.keys ?? []), jwk] };
  writeFileSync(values.keys, `${JSON.stringify(registry, null, 2)}\n`);
  console.log(keyid);
}

async function sign() {
  if (!values.key || !values.url) usage('signing needs --key and --url');
  const privateKey = createPrivateKey(readFileSync(values.key));
  const headers: Record<string, string> = {};
  for (const h of values.header) {
    const i = h.indexOf(':');
    if (i <= 0) usage(`--header ${h}: expected "name: value"`);
    headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  const body = values.data;
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const method = values.method ?? (body === undefined ? 'GET' : 'POST');
  const signed = await signAgentRequest({
    url: values.url,
    method,
    headers,
    body,
    privateKey,
    signatureAgent: values['signature-agent'],
  });
  if (values.print) {
    for (const [name, value] of Object.entries(signed)) console.log(`${name}: ${value}`);
    return;
  }
  const res = await fetch(values.url, { method, headers: signed, body });
  console.log(`${res.status} ${res.statusText}`);
  const location = res.headers.get('location');
  if (location) console.log(`location: ${location}`);
  console.log(await res.text());
  if (!res.ok) process.exitCode = 1;
}

if (positionals[0] === 'keygen') await keygen();
else if (positionals.length === 0) await sign();
else usage(`unknown command ${positionals[0]}`);
