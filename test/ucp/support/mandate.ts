/**
 * A UCP platform making AP2 checkout mandates (ap2-mandates.md at v2026-04-08) with the @sd-jwt
 * library, as a real platform would: an SD-JWT VC (`dc+sd-jwt`) signed with the platform's
 * ES256 key (the one in its profile's `signing_keys`), the checkout as a selectively disclosed
 * `checkout` claim, the holder's key in `cnf.jwk`, and a KB-JWT (aud: the business profile,
 * nonce: the checkout id) signed by the holder. Nothing of the system's own code. Each option
 * bends one thing, for the refusals.
 */
import { type KeyObject, randomBytes } from 'node:crypto';
import { digest, ES256 } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';

export interface MandateOpts {
  /** Signs the SD-JWT with this key (default: the platform's). */
  issuerKey?: KeyObject;
  kid?: string;
  /** The SD-JWT's `exp` (Unix s); default now + 10 min. */
  exp?: number;
  /** The KB-JWT's aud, nonce and iat. */
  aud?: string;
  nonce?: string;
  iat?: number;
  /** Presented without a KB-JWT. */
  noKeyBinding?: boolean;
  /** Presented with no disclosure (the checkout stays hidden). */
  discloseNothing?: boolean;
}

const jwkOf = (k: KeyObject) => k.export({ format: 'jwk' }) as Record<string, unknown>;

export async function makeMandate(
  checkout: Record<string, unknown>,
  p: { key: KeyObject; kid: string; holder: KeyObject; audience: string },
  o: MandateOpts = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const { d: _d, ...holderPublic } = jwkOf(p.holder);
  const sdjwt = new SDJwtVcInstance({
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: (n) => randomBytes(n).toString('base64url'),
    signer: await ES256.getSigner(jwkOf(o.issuerKey ?? p.key)),
    signAlg: 'ES256',
    kbSigner: await ES256.getSigner(jwkOf(p.holder)),
    kbSignAlg: 'ES256',
  });
  const issued = await sdjwt.issue(
    {
      iss: 'https://platform.example',
      iat: now,
      exp: o.exp ?? now + 600,
      vct: 'mandate.checkout.1',
      cnf: { jwk: holderPublic },
      checkout,
    },
    { _sd: ['checkout'] },
    { header: { kid: o.kid ?? p.kid } },
  );
  if (o.noKeyBinding) return sdjwt.present(issued, { checkout: true });
  return sdjwt.present(issued, o.discloseNothing ? {} : { checkout: true }, {
    kb: {
      payload: {
        iat: o.iat ?? now,
        aud: o.aud ?? p.audience,
        nonce: o.nonce ?? String(checkout.id),
      },
    },
  });
}

/** An SD-JWT+kb whose issuer JWT says `alg: none` and carries no signature (the rest kept). */
export function withAlgNone(mandate: string): string {
  const [jwt = '', ...rest] = mandate.split('~');
  const [, payload] = jwt.split('.');
  const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'dc+sd-jwt' })).toString('base64url');
  return [`${header}.${payload}.`, ...rest].join('~');
}

/** The same, with the KB-JWT (the last part) rewritten to `alg: none`, unsigned. */
export function withKbAlgNone(mandate: string): string {
  const parts = mandate.split('~');
  const [, payload] = (parts.at(-1) ?? '').split('.');
  const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'kb+jwt' })).toString('base64url');
  return [...parts.slice(0, -1), `${header}.${payload}.`].join('~');
}
