/**
 * Real certificates for the mutual-TLS tests, made with the openssl CLI in a temp directory:
 * a CA (the SPIFFE trust bundle), a server certificate for 127.0.0.1, X.509-SVIDs signed by the
 * CA, a certificate with two URI SANs, and an SVID from another CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pem {
  readonly cert: string;
  readonly key: string;
  readonly certFile: string;
  readonly keyFile: string;
}

const ssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function ca(dir: string, name: string): Pem {
  ssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-subj',
    `/CN=${name}`,
    '-days',
    '2',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return read(dir, name);
}

function leaf(dir: string, name: string, issuer: string, extensions: string): Pem {
  writeFileSync(join(dir, `${name}.ext`), extensions);
  ssl(dir, [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  ssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${issuer}.pem`,
    '-CAkey',
    `${issuer}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
  ]);
  return read(dir, name);
}

function read(dir: string, name: string): Pem {
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}

const svid = (uris: string[]) =>
  `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\nsubjectAltName=${uris.map((u) => `URI:${u}`).join(',')}\n`;

export const AGENT_ID = 'spiffe://example.org/ns/ai/sa/procurement-agent';

export function makeCertificates() {
  const dir = mkdtempSync(join(tmpdir(), 'ac-mtls-'));
  const trustBundle = ca(dir, 'ca');
  const otherCa = ca(dir, 'other-ca');
  return {
    dir,
    ca: trustBundle,
    server: leaf(
      dir,
      'server',
      'ca',
      'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
    ),
    agent: leaf(dir, 'agent', 'ca', svid([AGENT_ID])),
    subAgent: leaf(dir, 'sub-agent', 'ca', svid([`${AGENT_ID}/eu-west-1`])),
    evil: leaf(dir, 'evil', 'ca', svid([`${AGENT_ID}-evil`])),
    otherDomain: leaf(dir, 'other-domain', 'ca', svid(['spiffe://evil.org/ns/ai/sa/procurement-agent'])),
    twoUris: leaf(dir, 'two-uris', 'ca', svid([AGENT_ID, 'spiffe://example.org/ns/ai/sa/other'])),
    noUri: leaf(
      dir,
      'no-uri',
      'ca',
      'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth\nsubjectAltName=DNS:agent.example.org\n',
    ),
    fromOtherCa: leaf(dir, 'foreign', 'other-ca', svid([AGENT_ID])),
    otherCa,
  };
}

export type Certificates = ReturnType<typeof makeCertificates>;
