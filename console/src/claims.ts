/** A bearer token's claims, read for display only: the API verifies the token on every call. */
export interface Claims {
  sub?: string;
  roles: string[];
  exp?: number;
}

function base64UrlDecode(part: string): string {
  const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** The payload of a JWT, unverified; null when the text is not a JWT. Roles as the API reads them: `roles` and `scope`. */
export function claimsOf(token: string): Claims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const payload = JSON.parse(base64UrlDecode(parts[1])) as unknown;
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return null;
    const p = payload as Record<string, unknown>;
    const roles = new Set<string>();
    if (Array.isArray(p.roles)) for (const r of p.roles) if (typeof r === 'string') roles.add(r);
    if (typeof p.scope === 'string') for (const s of p.scope.split(' ')) if (s) roles.add(s);
    return {
      ...(typeof p.sub === 'string' ? { sub: p.sub } : {}),
      roles: [...roles],
      ...(typeof p.exp === 'number' ? { exp: p.exp } : {}),
    };
  } catch {
    return null;
  }
}
