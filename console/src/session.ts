/**
 * The operator's bearer token, kept in sessionStorage: it lives as long as the tab, is not
 * shared with other tabs and is gone when the browser closes. The page reads the token's claims
 * only to show who is signed in; what the token may do is decided by the API on every call.
 */
const KEY = 'agent-commerce.console.token';

export interface Claims {
  sub?: string;
  roles: string[];
  exp?: number;
}

type Listener = () => void;
const listeners = new Set<Listener>();

function base64UrlDecode(part: string): string {
  const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** The payload of a JWT, unverified (display only); null when the text is not a JWT. */
export function claimsOf(token: string): Claims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const payload = JSON.parse(base64UrlDecode(parts[1])) as Record<string, unknown>;
    const roles = new Set<string>();
    if (Array.isArray(payload.roles)) for (const r of payload.roles) if (typeof r === 'string') roles.add(r);
    if (typeof payload.scope === 'string') for (const s of payload.scope.split(' ')) if (s) roles.add(s);
    return {
      ...(typeof payload.sub === 'string' ? { sub: payload.sub } : {}),
      roles: [...roles],
      ...(typeof payload.exp === 'number' ? { exp: payload.exp } : {}),
    };
  } catch {
    return null;
  }
}

export const session = {
  token(): string | null {
    try {
      return sessionStorage.getItem(KEY);
    } catch {
      return null;
    }
  },
  signIn(token: string): void {
    sessionStorage.setItem(KEY, token.trim());
    for (const l of listeners) l();
  },
  signOut(): void {
    sessionStorage.removeItem(KEY);
    for (const l of listeners) l();
  },
  subscribe(l: Listener): () => void {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};
