import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestContext } from '../../lib/auth/context.ts';
import { forbidden } from '../../lib/auth/permissions.ts';
import type { ServedHosts } from '../../lib/http/served-hosts.ts';

/**
 * A mutation sent from a page of another origin is refused (403 FORBIDDEN) before any subgraph
 * is called: the console's state-changing calls come from its own pages, whose Origin names this
 * system (lib/http/served-hosts.ts). Operators authenticate with a bearer token, never a cookie,
 * so a foreign page cannot borrow their credentials (no CSRF as such); this check is the second
 * wall behind the development token's, for a page that obtained a token anyway (docs/console.md,
 * "Hardening"). Queries are not refused: a storefront behind its own proxy may forward its
 * Origin with a cart quote. Requests without Origin (servers, scripts) are not browsers' pages.
 */
export function foreignOriginPlugin(served: Pick<ServedHosts, 'origin'>): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart({ request }) {
      const origin = request.http?.headers.get('origin');
      if (origin === undefined || served.origin(origin, request.http?.headers.get('host'))) return;
      return {
        async didResolveOperation({ operation }) {
          if (operation?.operation === 'mutation')
            throw forbidden(
              'mutations are refused from a page of another origin (its Origin names no host this system serves)',
            );
        },
      };
    },
  };
}
