/** Who is calling a GraphQL operation, as established by the gateway from a bearer JWT. */
export interface Caller {
  /** `sub` of the verified token; undefined for anonymous callers. */
  readonly subject?: string;
  /** Roles from the token's `roles` claim plus the space-separated `scope` claim. */
  readonly roles: ReadonlySet<string>;
  readonly authenticated: boolean;
}

export const anonymous: Caller = Object.freeze({ roles: new Set<string>(), authenticated: false });

export function hasAnyRole(caller: Caller, required: readonly string[]): boolean {
  return required.some((r) => caller.roles.has(r));
}
