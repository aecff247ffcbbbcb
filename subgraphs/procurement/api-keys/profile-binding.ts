import { checkEndpointUrl } from '../webhooks/endpoint-url.ts';
import { ApiKeyInputInvalid } from './errors.ts';

/**
 * The UCP platform profile a checkout API key may act for (docs/acp-keys.md, "UCP profile";
 * UCP overview.md, "Identity Binding": for API keys the business MUST confirm that the key's
 * principal may act for the profile named in `UCP-Agent`). An operator binds a key to one of:
 *
 * - a profile URL (`https://platform.example/ucp/profile.json`): only that URL, compared after
 *   WHATWG normalisation (case of scheme and host, default port, dot segments);
 * - an origin (`https://platform.example`, no path): any profile that origin serves. Whoever
 *   serves files at an origin is that platform, and a platform may move or version its profile.
 *
 * Pure; ACP has no profile, so only the UCP edge reads the binding.
 */

/** The binding as stored: an origin (no trailing slash) or a normalised URL; throws naming `ucpProfile`. */
export function parseProfileBinding(raw: string, allowInsecure: boolean): string {
  const trimmed = raw.trim();
  const checked = checkEndpointUrl(trimmed, allowInsecure);
  if (!checked.ok) throw new ApiKeyInputInvalid('ucpProfile', `ucpProfile ${checked.reason}`);
  const url = new URL(checked.url);
  if (!allowInsecure && url.protocol !== 'https:')
    throw new ApiKeyInputInvalid(
      'ucpProfile',
      'ucpProfile must use https (UCP profiles are served over HTTPS)',
    );
  return url.pathname === '/' && url.search === '' ? url.origin : url.href;
}

/** True when a binding is an origin (any profile it serves), false for one profile URL. */
export const isOriginBinding = (binding: string): boolean =>
  !binding.slice(binding.indexOf('//') + 2).includes('/');

/** Whether a key bound to `binding` may act for the profile `profileUrl` (from `UCP-Agent`). */
export function bindingAllows(binding: string, profileUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(profileUrl);
  } catch {
    return false;
  }
  return isOriginBinding(binding) ? url.origin === binding : url.href === binding;
}
