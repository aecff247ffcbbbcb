/**
 * The operator console at /console (docs/console.md): the static files Vite built, nothing
 * rendered on the server. The console calls the public API with the operator's own token; the
 * only routes here are its files, its config and, in the embedded development default only,
 * a development token. @fastify/static is imported only when a built console exists, so a
 * gateway without one loads nothing for it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../../lib/config.ts';
import { servedHosts } from '../../lib/http/served-hosts.ts';
import { Problem, sendProblem } from '../../lib/problem.ts';
import { registerDevToken } from './dev-token.ts';

export const CONSOLE_PREFIX = '/console';

/**
 * No inline script or style element, nothing from another origin: the console is same-origin
 * files and same-origin API calls. (Setting element.style from script, which Preact and uPlot
 * do, is not restricted by style-src.) One exception, for the GraphiQL explorer: its
 * stylesheet (a local file) embeds five small PNGs (editor markers) as data: URLs, so img-src
 * allows data:. A data: image cannot run script and loads nothing from another origin;
 * rewriting GraphiQL's stylesheet to split them out would be a fork to maintain. (Its fonts,
 * also data: URLs, are left out of the build instead: console/src/explorer/graphiql.ts.)
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * dist/console of this installation: from the compiled gateway (dist/gateway/console/) that is
 * ../../console; from the sources (tests, `npm run dev`) ../../dist/console.
 */
export function defaultConsoleDir(): string {
  const rel = import.meta.url.endsWith('.ts') ? '../../dist/console/' : '../../console/';
  return fileURLToPath(new URL(rel, import.meta.url));
}

export interface ConsoleOptions {
  config: Config;
  /** The embedded topology: the only one that may offer development tokens. */
  embedded: boolean;
}

export async function registerConsole(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  const { config } = opts;
  const dir = config.CONSOLE_DIR ?? defaultConsoleDir();
  const built = existsSync(join(dir, 'index.html'));
  const devToken = opts.embedded && config.NODE_ENV !== 'production' && !config.AUTH_JWKS_URL;
  const explorer = config.CONSOLE_GRAPHQL_EXPLORER ?? config.NODE_ENV !== 'production';

  await app.register(async (scope) => {
    scope.addHook('onSend', async (_req, reply, payload) => {
      reply.header('content-security-policy', CONSOLE_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      return payload;
    });
    scope.get(`${CONSOLE_PREFIX}/config.json`, async (_req, reply) => {
      reply.header('cache-control', 'no-store');
      return { devToken, explorer };
    });
    if (devToken) await registerDevToken(scope, config, servedHosts(config));
    if (built) await serveFiles(scope, dir);
  });
}

async function serveFiles(scope: FastifyInstance, dir: string): Promise<void> {
  const { default: fastifyStatic } = await import('@fastify/static');
  await scope.register(fastifyStatic, {
    root: dir,
    prefix: `${CONSOLE_PREFIX}/`,
    // Routes for the files built (fixed until the next build), so /console/<page> can fall back
    // to index.html below instead of a 404.
    wildcard: false,
    index: false,
    dotfiles: 'ignore',
    etag: true,
    lastModified: false,
    cacheControl: false,
    setHeaders(reply, path) {
      reply.header('cache-control', path.includes('/assets/') ? IMMUTABLE : 'no-cache');
    },
  });
  const index = (reply: FastifyReply) => reply.header('cache-control', 'no-cache').sendFile('index.html');
  scope.get(CONSOLE_PREFIX, (_req, reply) => reply.redirect(`${CONSOLE_PREFIX}/`, 308));
  scope.get(`${CONSOLE_PREFIX}/`, (_req, reply) => index(reply));
  // Client routes (/console/orders?order=…) are pages of the single-page app; a missing asset
  // is a plain 404 so a stale hashed name never gets HTML instead of JavaScript.
  scope.get(`${CONSOLE_PREFIX}/*`, (req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    if (path.startsWith(`${CONSOLE_PREFIX}/assets/`) || /\.[a-z0-9]+$/i.test(path))
      return sendProblem(reply, new Problem(404, 'not-found', 'Not Found', `No console file at ${path}.`));
    return index(reply);
  });
}
