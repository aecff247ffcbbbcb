/**
 * The operator's bearer token, kept in sessionStorage: it lives as long as the tab, is not
 * shared with other tabs and is gone when the browser closes. The page reads the token's claims
 * only to show who is signed in; what the token may do is decided by the API on every call.
 */
export { type Claims, claimsOf } from './claims.ts';

const KEY = 'agent-commerce.console.token';

type Listener = () => void;
const listeners = new Set<Listener>();

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
