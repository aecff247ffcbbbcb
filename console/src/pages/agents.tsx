/**
 * Agents: the identities the agent gateway has seen, their rate and token bucket, and the
 * blocked ones with reason and time left (GET /api/v2/operator/agents, role agents:read).
 * Unblocking is POST /api/v2/operator/agents/unblock (agents:admin, audited by the API). Then
 * the checkout API keys of ACP platforms (GraphQL, agents:admin; pages/checkout-keys.tsx), the
 * platforms registered as OAuth 2.0 clients (pages/platform-clients.tsx) and the platforms buyers
 * linked (pages/linked-platforms.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { rest } from '../api.ts';
import { effectivePolicy, loadSpend, type SpendPolicy } from '../spend.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { duration, Empty, Loading, ProblemView, Time } from '../ui/parts.tsx';
import { CheckoutKeys } from './checkout-keys.tsx';
import { LinkedPlatforms } from './linked-platforms.tsx';
import { PlatformClients } from './platform-clients.tsx';

/** One agent of GET /api/v2/operator/agents (schemas/openapi/operator.yaml, `Agent`). */
export interface Agent {
  spiffe_id: string;
  first_seen: string;
  last_seen: string;
  calls_last_minute: number;
  rate_limit: { tokens: number; capacity: number; refill_per_second: number };
  block: {
    blocked: boolean;
    reason: string | null;
    blocked_until: string | null;
    seconds_left: number;
    consecutive_errors: number;
    max_consecutive_errors: number;
  };
}

const MAX_PAGES = 5;

/** The newest 1,000 identities at most: the API keeps 10,000, a page is 200. */
async function loadAgents(): Promise<{ agents: Agent[]; total: number }> {
  const agents: Agent[] = [];
  let cursor: string | null = null as string | null;
  let total = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const q = new URLSearchParams({ limit: '200', ...(cursor ? { cursor } : {}) });
    const { data }: { data: { agents: Agent[]; total: number; next_cursor: string | null } } = await rest<{
      agents: Agent[];
      total: number;
      next_cursor: string | null;
    }>(`/api/v2/operator/agents?${q}`);
    agents.push(...data.agents);
    total = data.total;
    cursor = data.next_cursor;
    if (!cursor) break;
  }
  return { agents, total };
}

export function AgentsPage() {
  const agents = useAsync(loadAgents, []);
  const spend = useAsync(loadSpend, []);
  const policies = spend.state === 'ok' ? (spend.data ?? []) : [];
  const unblock = useAction((spiffeId: string) =>
    rest<{ was_blocked: boolean }>('/api/v2/operator/agents/unblock', { body: { spiffe_id: spiffeId } }),
  );
  const [live, setLive] = useState(true);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => {
      agents.reload();
      spend.reload();
    }, 5000);
    return () => clearInterval(t);
  }, [live, agents.reload, spend.reload]);

  const page = agents.state === 'idle' ? undefined : agents.data;
  const rows = page?.agents;
  const blocked = rows?.filter((r) => r.block.blocked) ?? [];
  return (
    <section aria-labelledby="agents-h">
      <h1 id="agents-h">Agents</h1>
      <div class="toolbar">
        <button type="button" onClick={agents.reload}>
          Refresh
        </button>
        <label>
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> refresh
          every 5 s
        </label>
      </div>
      {unblock.state === 'error' ? <ProblemView error={unblock.error} /> : null}
      {unblock.state === 'ok' ? (
        <p role="status" class="ok">
          {unblock.data.data.was_blocked ? 'Unblocked.' : 'That agent was not blocked.'}
        </p>
      ) : null}
      {agents.state === 'error' ? <ProblemView error={agents.error} /> : null}
      {!rows && agents.state === 'loading' ? <Loading what="agents" /> : null}
      {rows && rows.length === 0 ? <Empty>No agent has called the purchase gateway yet.</Empty> : null}
      {blocked.length > 0 ? (
        <>
          <h2>Blocked ({blocked.length})</h2>
          <ul class="cards" aria-label="Blocked agents">
            {blocked.map((a) => (
              <li class="card blocked" key={a.spiffe_id} data-testid="blocked-agent">
                <code>{a.spiffe_id}</code>
                <p>
                  {a.block.reason ?? 'Blocked'} — {duration(a.block.seconds_left * 1000)} left (until{' '}
                  <Time at={a.block.blocked_until} />)
                </p>
                <button
                  type="button"
                  disabled={unblock.state === 'loading'}
                  onClick={async () => {
                    if ((await unblock.run(a.spiffe_id)) !== undefined) agents.reload();
                  }}
                >
                  Unblock
                </button>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {rows && rows.length > 0 ? (
        <>
          <h2>
            Identities seen ({rows.length}
            {page && page.total > rows.length ? ` of ${page.total}` : ''})
          </h2>
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">SPIFFE ID</th>
                  <th scope="col">Calls / min</th>
                  <th scope="col">Token bucket</th>
                  <th scope="col">State</th>
                  <th scope="col">Spend / budget</th>
                  <th scope="col">First seen</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((a) => (
                  <tr key={a.spiffe_id}>
                    <td>
                      <code>{a.spiffe_id}</code>
                    </td>
                    <td class="num">{a.calls_last_minute}</td>
                    <td>
                      <Bucket level={a.rate_limit.tokens} capacity={a.rate_limit.capacity} />
                    </td>
                    <td>
                      {a.block.blocked ? (
                        <span class="tag bad">blocked</span>
                      ) : (
                        <span class="tag" title="consecutive contract errors">
                          active · {a.block.consecutive_errors}/{a.block.max_consecutive_errors} errors
                        </span>
                      )}
                    </td>
                    <td>
                      <SpendOf policy={effectivePolicy(a.spiffe_id, policies)} />
                    </td>
                    <td>
                      <Time at={a.first_seen} />
                    </td>
                    <td>
                      <Time at={a.last_seen} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      <h2>Spend against budget</h2>
      {spend.state === 'loading' && spend.data === undefined ? <Loading what="spend policies" /> : null}
      {spend.state === 'error' ? <ProblemView error={spend.error} /> : null}
      {spend.state === 'ok' && spend.data === null ? (
        <p class="note">This gateway has no spend policies (its API offers no spendPolicies query).</p>
      ) : null}
      {spend.state === 'ok' && spend.data?.length === 0 ? <Empty>No spend policy is set.</Empty> : null}
      {spend.state === 'ok' && spend.data && spend.data.length > 0 ? (
        <SpendTable policies={spend.data} />
      ) : null}
      <CheckoutKeys />
      <PlatformClients />
      <LinkedPlatforms />
    </section>
  );
}

function Bucket({ level, capacity }: { level: number; capacity: number }) {
  return (
    <span class="bucket">
      <meter min={0} max={capacity} value={level} aria-label="tokens left" /> {Math.floor(level)} / {capacity}
    </span>
  );
}

function SpendOf({ policy }: { policy: SpendPolicy | undefined }) {
  if (!policy) return <span class="muted">no policy</span>;
  return (
    <span title={`policy of ${policy.subject}`}>
      {policy.currentPeriod.spent} / {policy.budget} {policy.currency}
    </span>
  );
}

function SpendTable({ policies }: { policies: SpendPolicy[] }) {
  return (
    <div class="scroll">
      <table data-testid="spend">
        <thead>
          <tr>
            <th scope="col">Policy for</th>
            <th scope="col">Period</th>
            <th scope="col">Spent</th>
            <th scope="col">Budget</th>
            <th scope="col">Remaining</th>
            <th scope="col">Resets</th>
          </tr>
        </thead>
        <tbody>
          {policies.map((p) => (
            <tr key={p.subject}>
              <td>
                <code>{p.subject}</code>
              </td>
              <td>{p.period}</td>
              <td class="num">
                <meter
                  min={0}
                  max={Number(p.budget)}
                  value={Number(p.currentPeriod.spent)}
                  aria-label="share of the budget spent"
                />{' '}
                {p.currentPeriod.spent}
              </td>
              <td class="num">
                {p.budget} {p.currency}
              </td>
              <td class="num">{p.currentPeriod.remaining}</td>
              <td>
                <Time at={p.currentPeriod.resetsAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
