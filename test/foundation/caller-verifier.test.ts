import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createCallerVerifier, TokenError } from '../../lib/auth/jwt.ts';

const config = { AUTH_ISSUER: 'https://issuer.test', AUTH_AUDIENCE: 'gateway' };

async function setup() {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  let now = Date.UTC(2026, 0, 1);
  const verifier = createCallerVerifier(config, publicKey, () => now);
  const sign = (claims: Record<string, unknown>, expSeconds: number) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(config.AUTH_ISSUER)
      .setAudience(config.AUTH_AUDIENCE)
      .setSubject('alice')
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(now / 1000) + expSeconds)
      .sign(privateKey);
  return { verifier, sign, advance: (ms: number) => (now += ms), exportJWK };
}

describe('caller token verification', () => {
  it('maps roles and scope claims to one role set', async () => {
    const { verifier, sign } = await setup();
    const caller = await verifier.verify(await sign({ roles: ['a'], scope: 'b c' }, 300));
    expect([...caller.roles].sort()).toEqual(['a', 'b', 'c']);
    expect(caller.subject).toBe('alice');
  });

  it('still refuses a remembered token once it has expired', async () => {
    const { verifier, sign, advance } = await setup();
    const token = await sign({ roles: ['a'] }, 30);
    await verifier.verify(token);
    advance(10_000);
    await expect(verifier.verify(token)).resolves.toMatchObject({ authenticated: true });
    advance(25_000);
    await expect(verifier.verify(token)).rejects.toBeInstanceOf(TokenError);
  });

  it('refuses a token whose signature was altered, even after the original was verified', async () => {
    const { verifier, sign } = await setup();
    const token = await sign({ roles: ['a'] }, 300);
    await verifier.verify(token);
    const [h, p, s] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ roles: ['admin'], sub: 'alice', iss: config.AUTH_ISSUER, aud: config.AUTH_AUDIENCE, exp: 9e9 })).toString('base64url')}.${s}`;
    expect(p).not.toBe(forged.split('.')[1]);
    await expect(verifier.verify(forged)).rejects.toBeInstanceOf(TokenError);
  });
});
