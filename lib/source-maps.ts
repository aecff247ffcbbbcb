import sourceMapSupport from 'source-map-support';

/**
 * Stack traces of the compiled runtime name the TypeScript source lines. Node's own
 * `--enable-source-maps` parses the map of every module with one at load time, the dependencies'
 * too (Apollo's, graphql-tools'…): measured here, ~40 MB of RSS for maps no stack ever uses.
 * source-map-support reads a map only when a stack trace is formatted, for the frames in it.
 * Imported first by every entry point; under tsx (tests, `npm run dev`) tsx maps already.
 */
if (import.meta.url.endsWith('.js')) sourceMapSupport.install({ environment: 'node' });
