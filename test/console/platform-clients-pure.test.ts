/**
 * The registration form's input (console/src/platform-clients.ts): what the page sends to
 * registerOAuthClient for what the operator typed.
 */
import { describe, expect, it } from 'vitest';
import { EMPTY_REGISTER, type RegisterForm, registerInput } from '../../console/src/platform-clients.ts';

const form = (over: Partial<RegisterForm>): RegisterForm => ({
  ...EMPTY_REGISTER,
  name: ' App ',
  ucpProfile: ' https://platform.example ',
  ...over,
});

describe('the registration input', () => {
  it.each([
    ['one URI', 'https://a.example/cb', ['https://a.example/cb']],
    [
      'one a line, blanks and spaces dropped',
      ' https://a.example/cb \n\n\r\nhttps://b.example/cb\n',
      ['https://a.example/cb', 'https://b.example/cb'],
    ],
    ['nothing', '  \n ', []],
  ])('reads redirect URIs (%s)', (_what, text, uris) => {
    expect(registerInput(form({ redirectUris: text }))).toEqual({
      ok: true,
      input: { name: 'App', redirectUris: uris, ucpProfile: 'https://platform.example' },
    });
  });

  it('sends no JWK Set for a public client, even one typed before switching to none', () => {
    const r = registerInput(
      form({ redirectUris: 'http://127.0.0.1/cb', authMethod: 'none', jwks: '{"keys":[]}' }),
    );
    expect(r.ok && 'jwks' in r.input).toBe(false);
  });

  it('sends the JWK Set text for private_key_jwt', () => {
    const jwks = '{"keys":[{"kty":"EC","crv":"P-256","x":"x","y":"y"}]}';
    const r = registerInput(
      form({ redirectUris: 'https://a.example/cb', authMethod: 'private_key_jwt', jwks: ` ${jwks}\n` }),
    );
    expect(r).toMatchObject({ ok: true, input: { jwks } });
  });

  it('sends the JWK Set URL for private_key_jwt, and both when both are typed (the API refuses that)', () => {
    const uri = 'https://a.example/jwks.json';
    const one = registerInput(
      form({ redirectUris: 'https://a.example/cb', authMethod: 'private_key_jwt', jwksUri: ` ${uri} ` }),
    );
    expect(one).toEqual({
      ok: true,
      input: {
        name: 'App',
        redirectUris: ['https://a.example/cb'],
        jwksUri: uri,
        ucpProfile: 'https://platform.example',
      },
    });
    const both = registerInput(
      form({ redirectUris: 'https://a.example/cb', authMethod: 'private_key_jwt', jwksUri: uri, jwks: '{}' }),
    );
    expect(both).toMatchObject({ ok: true, input: { jwksUri: uri, jwks: '{}' } });
  });

  it('refuses private_key_jwt without keys on the jwks field (sent, it would register a public client)', () => {
    const r = registerInput(
      form({ redirectUris: 'https://a.example/cb', authMethod: 'private_key_jwt', jwks: '  ' }),
    );
    expect(r).toMatchObject({ ok: false, field: 'jwks' });
  });
});
