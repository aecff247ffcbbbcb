/**
 * Client routes under /console/ with the History API (the gateway answers every
 * /console/<page> with index.html, so a reload or a shared link opens the same page).
 * A router library would be larger than these lines.
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export function currentRoute(): { page: string; params: URLSearchParams } {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  const page = rest.replace(/^\/+|\/+$/g, '').split('/')[0] || 'agents';
  return { page, params: new URLSearchParams(location.search) };
}

export function navigate(to: string): void {
  history.pushState(null, '', `${BASE}/${to.replace(/^\/+/, '')}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute() {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const on = () => setRoute(currentRoute());
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  return route;
}
