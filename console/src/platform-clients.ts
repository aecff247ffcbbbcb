/**
 * Agent platforms registered as OAuth 2.0 clients (GraphQL `oauthClients` and
 * `registerOAuthClient`, agents:admin; docs/identity-linking.md), and the registration form. The
 * API validates every field and names the one it refuses (`extensions.field`); the page only
 * turns what was typed into the mutation's input.
 */

export interface OAuthClient {
  clientId: string;
  name: string;
  redirectUris: string[];
  /** private_key_jwt or none. */
  tokenEndpointAuthMethod: string;
  /** Where its keys are fetched from (private_key_jwt registered with a URL); null otherwise. */
  jwksUri: string | null;
  ucpProfile: string;
  /** ISO 8601; null for a client registered before the time was kept. */
  registeredAt: string | null;
  registeredBy: string | null;
}

/** How the platform authenticates at the token endpoint (the two methods the metadata offers). */
export type ClientAuthMethod = 'private_key_jwt' | 'none';

export interface RegisterForm {
  name: string;
  /** One redirect URI a line (blank lines ignored). */
  redirectUris: string;
  authMethod: ClientAuthMethod;
  /** The platform's public JWK Set as JSON text (private_key_jwt only)… */
  jwks: string;
  /** …or the URL it publishes it at. */
  jwksUri: string;
  ucpProfile: string;
}

export const EMPTY_REGISTER: RegisterForm = {
  name: '',
  redirectUris: '',
  authMethod: 'none',
  jwks: '',
  jwksUri: '',
  ucpProfile: '',
};

/** The roles that may register platforms (the mutation's @requiresRole). */
export const REGISTER_ROLE = 'agents:admin';

export type RegisterInput =
  | {
      ok: true;
      input: { name: string; redirectUris: string[]; jwks?: string; jwksUri?: string; ucpProfile: string };
    }
  | { ok: false; field: 'jwks'; message: string };

/**
 * RegisterOAuthClient's input from the form: text trimmed, one redirect URI a line, the JWK Set
 * and its URL only for private_key_jwt (both given: both sent, for the API to refuse). The
 * mutation reads "no keys" as a public client, so private_key_jwt with neither is refused here:
 * sent, it would silently register a public client.
 */
export function registerInput(f: RegisterForm): RegisterInput {
  const redirectUris = f.redirectUris
    .split(/\r?\n/)
    .map((u) => u.trim())
    .filter((u) => u !== '');
  const base = { name: f.name.trim(), redirectUris, ucpProfile: f.ucpProfile.trim() };
  if (f.authMethod === 'none') return { ok: true, input: base };
  const jwks = f.jwks.trim();
  const jwksUri = f.jwksUri.trim();
  if (jwks === '' && jwksUri === '')
    return {
      ok: false,
      field: 'jwks',
      message:
        'jwks: private_key_jwt needs the platform’s public keys: a JWK Set {"keys": [...]}, or the URL it publishes it at',
    };
  return { ok: true, input: { ...base, ...(jwks ? { jwks } : {}), ...(jwksUri ? { jwksUri } : {}) } };
}

/** The client authentication in words for the list. */
export function authMethodInWords(method: string, jwksUri?: string | null): string {
  if (method === 'private_key_jwt' && jwksUri)
    return 'confidential: private_key_jwt, keys fetched from its URL';
  if (method === 'private_key_jwt') return 'confidential: private_key_jwt with its registered keys';
  if (method === 'none') return 'public: none, PKCE S256 only';
  return method;
}
