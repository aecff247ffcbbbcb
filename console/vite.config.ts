// The operator console's build (docs/console.md): static files under dist/console/, served by
// the gateway at /console. Hashed asset names let the gateway cache them for a year.
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  // No react → preact/compat alias: the console's own code imports preact directly, and the
  // explorer's GraphiQL runs on React 18 itself (console/src/explorer/graphiql.ts says why).
  plugins: [preact({ reactAliasesEnabled: false })],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // No inline data: URLs for assets: the Content-Security-Policy allows files from 'self' only.
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
    // The explorer's GraphiQL chunk is ~810 kB minified (261 kB gzipped), loaded only by that
    // page (docs/console.md measures it); the first page stays far below this.
    chunkSizeWarningLimit: 900,
  },
  server: {
    // `npm run console:dev`: the API is the gateway of `npm start`.
    proxy: Object.fromEntries(
      [
        '/graphql',
        '/api',
        '/v1',
        '/v2',
        '/cart',
        '/metrics',
        '/console/dev-token',
        '/console/config.json',
      ].map((p) => [p, process.env.CONSOLE_API_URL ?? 'http://127.0.0.1:8080']),
    ),
  },
});
