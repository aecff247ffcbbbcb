/**
 * The consent page's HTML and script. No inline script or style (the console's CSP); every text
 * from the server (the platform's name, identities) goes in with textContent, never as HTML.
 * The token is the console's own (sessionStorage key of console/src/session.ts) or pasted here;
 * in the embedded development default the page offers the development token as the console does.
 */
export function consentPage(scriptPath: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Link a platform</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script type="module" src="${scriptPath}"></script></head>
<body>
<main>
<h1>Link a platform to your buying account</h1>
<section id="signin" hidden>
<p>Sign in as a buyer administrator (a token with the <code>agents:admin</code> role).</p>
<label>Bearer token <textarea id="token" rows="3" cols="60"></textarea></label>
<button id="use-token" type="button">Sign in</button>
<button id="dev-token" type="button" hidden>Sign in with a development token</button>
</section>
<section id="consent" hidden>
<p><strong id="client"></strong> asks to act for your company with these permissions:</p>
<ul id="scopes"></ul>
<fieldset><legend>It will act as the agent identity</legend><div id="identities"></div></fieldset>
<p>Its calls then run under that identity's spend policy, approval threshold, rate limits and audit.</p>
<button id="grant" type="button">Link</button> <button id="refuse" type="button">Refuse</button>
</section>
<p id="status" role="status"></p>
</main>
</body>
</html>
`;
}

export const CONSENT_SCRIPT = `const KEY = 'agent-commerce.console.token';
const $ = (id) => document.getElementById(id);
const base = location.pathname.replace(/\\/+$/, '');
const say = (t) => { $('status').textContent = t; };
const token = () => { try { return sessionStorage.getItem(KEY); } catch { return null; } };
const call = (path, init = {}) => fetch(path, { ...init, headers: { ...(init.headers || {}), authorization: 'Bearer ' + token() } });

async function signIn() {
  $('signin').hidden = false;
  $('consent').hidden = true;
  const cfg = await fetch('/console/config.json').then((r) => r.json()).catch(() => ({}));
  $('dev-token').hidden = !cfg.devToken;
}

async function load() {
  if (!token()) return signIn();
  const r = await call(base + '/details');
  const body = await r.json().catch(() => ({}));
  if (r.status === 401 || r.status === 403) { say(body.error_description || 'Not allowed.'); return signIn(); }
  if (!r.ok) { say(body.error_description || 'This sign-in cannot continue.'); return; }
  $('signin').hidden = true;
  $('consent').hidden = false;
  $('client').textContent = body.client.name;
  $('scopes').replaceChildren(...body.scopes.map((s) => { const li = document.createElement('li'); li.textContent = s.description + ' (' + s.scope + ')'; return li; }));
  $('identities').replaceChildren(...body.identities.map((x, n) => {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'radio'; input.name = 'identity'; input.value = x.spiffeId; input.checked = n === 0;
    label.append(input, ' ' + x.name + ' — ' + x.agentId + ' (' + x.spiffeId + ')');
    const policy = document.createElement('small');
    const usd = (c) => '$' + (c / 100).toFixed(2);
    const sp = x.spendPolicy;
    policy.textContent = sp
      ? ' Spend policy: ' + usd(sp.budgetCents) + ' a ' + sp.period
        + (sp.maxPerOrderCents !== null ? ', at most ' + usd(sp.maxPerOrderCents) + ' an order' : '')
        + (sp.approvalAboveCents !== null ? ', approval above ' + usd(sp.approvalAboveCents) : ', no approval threshold')
      : ' No spend policy: the default applies.';
    label.append(policy);
    const p = document.createElement('p'); p.append(label); return p;
  }));
  if (body.identities.length === 0) say('No agent identity to link: issue a checkout API key first (Agents page).');
}

async function decide(grant) {
  const chosen = document.querySelector('input[name=identity]:checked');
  const r = await call(base, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(grant ? { grant: true, spiffeId: chosen && chosen.value } : { grant: false }) });
  const body = await r.json().catch(() => ({}));
  if (r.ok && body.redirectTo) location.assign(body.redirectTo);
  else say(body.error_description || 'Refused.');
}

$('use-token').addEventListener('click', () => { sessionStorage.setItem(KEY, $('token').value.trim()); load(); });
$('dev-token').addEventListener('click', async () => {
  const r = await fetch('/console/dev-token', { method: 'POST' });
  const b = await r.json().catch(() => ({}));
  if (b.token) { sessionStorage.setItem(KEY, b.token); load(); } else say('No development token here.');
});
$('grant').addEventListener('click', () => decide(true));
$('refuse').addEventListener('click', () => decide(false));
load();
`;
