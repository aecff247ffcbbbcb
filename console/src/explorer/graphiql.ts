/**
 * Real GraphiQL (issue 14) for the explorer page, in its own lazily loaded chunk. GraphiQL is a
 * React component; it runs here on React 18 itself, mounted into one DOM node the Preact page
 * owns, rather than through preact/compat: GraphiQL 3 leans on React internals (Radix UI's
 * portals and focus scopes, useSyncExternalStore) that compat only approximates, and the page
 * never shares components across the two. React is paid for only when the explorer opens.
 *
 * No JSX in this file: the console's JSX compiles to Preact, so this uses createElement.
 */
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
// GraphiQL's stylesheets without graphiql/graphiql.css's embedded fonts (Roboto and Fira Code
// as base64, 270 kB gzipped, and a data: font-src in the CSP): its own rules fall back to the
// system's sans-serif and monospace. Vite emits them as one local stylesheet of this chunk.
import '@graphiql/react/dist/style.css';
import 'graphiql/src/style.css';

// The repository's operations (schemas/operations/), inlined at build time into this chunk
// (not the first page), with their comments: the promotions listing first (an operator query the
// development token may run), then the others by name, one tab each.
const files = import.meta.glob('../../../schemas/operations/*.graphql', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

export const TABS = Object.entries(files)
  .map(([path, query]) => ({ name: path.replace(/^.*\/|\.graphql$/g, ''), query }))
  .sort(
    (a, b) =>
      Number(b.name === 'promotions') - Number(a.name === 'promotions') || a.name.localeCompare(b.name),
  );

export interface ExplorerOptions {
  /** The operator's bearer token now: read on every request, so a new sign-in is used at once. */
  token: () => string | null;
}

/** Mounts GraphiQL into `el`; returns the unmount. */
export function mountGraphiQL(el: HTMLElement, opts: ExplorerOptions): () => void {
  const fetcher = createGraphiQLFetcher({
    url: '/graphql',
    // The toolkit's fetcher with the token added per request (not a fixed header GraphiQL
    // would show, persist and let the operator edit away).
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      const token = opts.token();
      if (token) headers.set('authorization', `Bearer ${token}`);
      return fetch(input, { ...init, headers });
    },
  });
  const root = createRoot(el);
  root.render(
    createElement(GraphiQL, {
      fetcher,
      defaultTabs: TABS.map((t) => ({ query: t.query })),
      // Tabs and history live as long as the tab, like the token (sessionStorage), not on disk.
      storage: sessionStorage,
      shouldPersistHeaders: false,
      defaultEditorToolsVisibility: 'variables',
    }),
  );
  return () => root.unmount();
}
