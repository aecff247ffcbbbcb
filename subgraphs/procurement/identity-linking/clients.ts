import { randomBytes } from 'node:crypto';
import { freeText } from '../../../lib/text/free-text.ts';
import { parseProfileBinding } from '../api-keys/profile-binding.ts';
import { checkEndpointUrl } from '../webhooks/endpoint-url.ts';

/**
 * A platform registered as an OAuth client, and the rules its registration follows. Public
 * platforms (native, on-device agents) authenticate with `none` and PKCE and redirect to a
 * loopback address (any port there, RFC 8252 §7.3: oidc-provider matches native loopback
 * redirects without the port) or https; confidential ones with `private_key_jwt` by the public
 * keys given here. Stored as oidc-provider client metadata (its adapter's `Client` rows).
 */
export interface PlatformClientInput {
  readonly name: string;
  readonly redirectUris: readonly string[];
  /** Public JWKs for private_key_jwt; absent or empty (and no jwksUri): a public client (`none` + PKCE). */
  readonly jwks?: readonly Record<string, unknown>[];
  /**
   * Where the platform publishes its JWK Set for private_key_jwt (RFC 7591 `jwks_uri`), instead
   * of `jwks`: fetched by the authorization server when an assertion is checked, so the platform
   * rotates its keys without registering again. https, no credentials or fragment, and not a
   * private or loopback address (the fetch is SSRF-guarded too: gateway/oauth/provider.ts).
   */
  readonly jwksUri?: string;
  /**
   * The UCP platform profile (URL, or origin for every profile served there) the platform's
   * tokens may act for, as a checkout API key is bound (overview.md, "Identity Binding").
   */
  readonly ucpProfile: string;
}

export class ClientInputInvalid extends Error {
  override name = 'ClientInputInvalid';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Most characters of a client's name (lib/text/free-text.ts). */
export const MAX_NAME = 100;
const LOOPBACK = new Set(['127.0.0.1', '[::1]']);
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** Whether a redirect URI is a loopback one (http to 127.0.0.1 or [::1]). */
export const isLoopbackRedirect = (u: URL): boolean => u.protocol === 'http:' && LOOPBACK.has(u.hostname);

/** Who registered a client and when (kept in its metadata for the console's list). */
export interface Registration {
  readonly atMs: number;
  /** The operator's token subject; null when the token had none. */
  readonly by: string | null;
}

/**
 * Validated client metadata for oidc-provider, with a new client_id; throws ClientInputInvalid.
 * Pure but for the id.
 */
export function clientMetadata(
  input: PlatformClientInput,
  opts: { allowInsecureProfiles?: boolean; registered?: Registration } = {},
): Record<string, unknown> {
  let ucpProfile: string;
  try {
    ucpProfile = parseProfileBinding(input.ucpProfile ?? '', opts.allowInsecureProfiles ?? false);
  } catch (e) {
    throw new ClientInputInvalid('ucpProfile', (e as Error).message);
  }
  const name = freeText(input.name, { max: MAX_NAME, required: true });
  if (!name.ok) throw new ClientInputInvalid('name', `name ${name.reason}`);
  if (input.redirectUris.length < 1 || input.redirectUris.length > 10)
    throw new ClientInputInvalid('redirectUris', 'redirectUris: 1 to 10 absolute URLs');
  const urls = input.redirectUris.map((raw) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ClientInputInvalid(
        'redirectUris',
        `redirectUris: ${raw.slice(0, 100)} is not an absolute URL`,
      );
    }
    if (u.hash || u.username || u.password || raw.length > 2048)
      throw new ClientInputInvalid(
        'redirectUris',
        'redirectUris: no fragment or credentials, at most 2048 characters',
      );
    if (u.protocol !== 'https:' && !isLoopbackRedirect(u))
      throw new ClientInputInvalid('redirectUris', 'redirectUris: https, or http to 127.0.0.1 or [::1]');
    return u;
  });
  const loopback = urls.filter(isLoopbackRedirect).length;
  if (loopback > 0 && loopback < urls.length)
    throw new ClientInputInvalid(
      'redirectUris',
      'redirectUris: loopback and https redirects need two clients',
    );
  const keys = input.jwks ?? [];
  const jwksUri = jwksUriOf(input.jwksUri, opts.allowInsecureProfiles ?? false);
  if (jwksUri !== undefined && keys.length > 0)
    throw new ClientInputInvalid('jwksUri', 'jwksUri: give the keys (jwks) or their URL (jwksUri), not both');
  if (keys.length > 5) throw new ClientInputInvalid('jwks', 'jwks: at most 5 keys');
  for (const k of keys)
    if (typeof k.kty !== 'string' || PRIVATE_MEMBERS.some((m) => m in k))
      throw new ClientInputInvalid(
        'jwks',
        'jwks: public keys only (EC, RSA or OKP), never a private or symmetric key',
      );
  return {
    client_id: `pc_${randomBytes(12).toString('hex')}`,
    client_name: name.text,
    redirect_uris: input.redirectUris,
    application_type: loopback > 0 ? 'native' : 'web',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ucp_profile: ucpProfile,
    ...(opts.registered ? { registered_at: new Date(opts.registered.atMs).toISOString() } : {}),
    ...(opts.registered?.by ? { registered_by: opts.registered.by } : {}),
    ...(keys.length > 0
      ? { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys } }
      : jwksUri !== undefined
        ? { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwksUri }
        : { token_endpoint_auth_method: 'none' }),
  };
}

/** A registered jwks_uri, checked as a webhook URL is (the server fetches it), https unless insecure is allowed. */
function jwksUriOf(raw: string | undefined, allowInsecure: boolean): string | undefined {
  const trimmed = raw?.trim() ?? '';
  if (trimmed === '') return undefined;
  const checked = checkEndpointUrl(trimmed, allowInsecure);
  if (!checked.ok) throw new ClientInputInvalid('jwksUri', `jwksUri ${checked.reason}`);
  if (!allowInsecure && !checked.url.startsWith('https:'))
    throw new ClientInputInvalid('jwksUri', 'jwksUri must use https');
  return checked.url;
}
