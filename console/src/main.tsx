import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './styles.css';
import { AgentsPage } from './pages/agents.tsx';
import { ApprovalsPage } from './pages/approvals.tsx';
import { CatalogPage } from './pages/catalog.tsx';
import { CheckoutPage } from './pages/checkout.tsx';
import { ExplorerPage } from './pages/explorer.tsx';
import { LivePage } from './pages/live.tsx';
import { OrdersPage } from './pages/orders.tsx';
import { PricesPage } from './pages/prices.tsx';
import { PromotionsPage } from './pages/promotions.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { SpendPoliciesPage } from './pages/spend-policies.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { useRoute } from './router.ts';
import { type Claims, claimsOf, session } from './session.ts';
import { Link, operatorTimeZone, Time } from './ui/parts.tsx';

/** What the gateway tells the page (GET /console/config.json): which optional parts it offers. */
export interface ConsoleConfig {
  devToken: boolean;
  explorer: boolean;
}

const PAGES = [
  { id: 'agents', label: 'Agents' },
  { id: 'orders', label: 'Orders and audit' },
  { id: 'checkout', label: 'Checkout' },
  { id: 'approvals', label: 'Approvals' },
  { id: 'spend', label: 'Spend policies' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'catalog', label: 'Catalog' },
  { id: 'prices', label: 'Prices' },
  { id: 'promotions', label: 'Promotions' },
  { id: 'explorer', label: 'GraphQL explorer' },
  { id: 'live', label: 'Live' },
] as const;

function useSession(): string | null {
  const [token, setToken] = useState(session.token());
  useEffect(() => session.subscribe(() => setToken(session.token())), []);
  return token;
}

function App() {
  const token = useSession();
  const route = useRoute();
  const [config, setConfig] = useState<ConsoleConfig>({ devToken: false, explorer: false });
  useEffect(() => {
    fetch('/console/config.json')
      .then((r) => (r.ok ? r.json() : null))
      .then((c: ConsoleConfig | null) => c && setConfig(c))
      .catch(() => {});
  }, []);
  const claims: Claims | null = token ? claimsOf(token) : null;
  const pages = PAGES.filter((p) => p.id !== 'explorer' || config.explorer);
  const page = pages.some((p) => p.id === route.page) ? route.page : 'agents';

  // After a navigation, focus moves to the page (screen readers announce it, Tab starts there).
  const shown = useRef(page);
  useEffect(() => {
    if (shown.current === page) return;
    shown.current = page;
    document.getElementById('main')?.focus();
  }, [page]);

  useEffect(() => {
    const label = pages.find((p) => p.id === page)?.label ?? '';
    document.title = token ? `${label} · Agent commerce console` : 'Sign in · Agent commerce console';
  }, [page, token, pages]);

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Agent commerce console</span>
        {token ? (
          <nav aria-label="Pages">
            <ul>
              {pages.map((p) => (
                <li key={p.id}>
                  <Link to={p.id} {...(p.id === page ? { 'aria-current': 'page' } : {})}>
                    {p.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        {token ? (
          <div class="who">
            <span title={claims?.roles.join(' ') ?? ''}>
              {claims?.sub ?? 'signed in'}
              {claims?.exp ? (
                <>
                  {' '}
                  · until <Time at={claims.exp * 1000} />
                </>
              ) : null}
            </span>{' '}
            <button type="button" onClick={() => session.signOut()}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      <main id="main" tabIndex={-1}>
        {!token ? <SignIn devToken={config.devToken} /> : null}
        {token && page === 'agents' ? <AgentsPage /> : null}
        {token && page === 'orders' ? <OrdersPage params={route.params} /> : null}
        {token && page === 'checkout' ? <CheckoutPage /> : null}
        {token && page === 'approvals' ? <ApprovalsPage params={route.params} /> : null}
        {token && page === 'spend' ? <SpendPoliciesPage /> : null}
        {token && page === 'webhooks' ? <WebhooksPage /> : null}
        {token && page === 'catalog' ? <CatalogPage params={route.params} /> : null}
        {token && page === 'prices' ? <PricesPage /> : null}
        {token && page === 'promotions' ? <PromotionsPage /> : null}
        {token && page === 'explorer' ? <ExplorerPage /> : null}
        {token && page === 'live' ? <LivePage /> : null}
      </main>
      <footer>Times are shown in {operatorTimeZone}.</footer>
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
