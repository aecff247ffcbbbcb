/**
 * Agents: the identities the agent gateway has seen, their rate and token bucket, and the
 * blocked ones with reason and time left (GET /api/v2/operator/agents, role agents:read).
 * Unblocking is POST /api/v2/operator/agents/unblock (agents:admin, audited by the API).
 */
import { useEffect, useState } from 'preact/hooks';
import { rest } from '../api.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { duration, Empty, Loading, ProblemView, Time } from '../ui/parts.tsx';

export interface AgentRow {
  spiffeId: string;
  firstSeen?: string;
  lastSeen?: string;
  callsLastMinute?: number;
  bucketLevel?: number;
  bucketCapacity?: number;
  blocked: boolean;
  reason?: string;
  timeLeftMs?: number;
  consecutiveErrors?: number;
}

type Raw = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const obj = (v: unknown): Raw => (v && typeof v === 'object' ? (v as Raw) : {});

/** One row of the operator API's agent list (docs/operator-api.md). */
export function agentRow(a: Raw): AgentRow {
  const bucket = obj(a.bucket ?? a.token_bucket);
  const block = obj(a.block);
  const leftSeconds = num(block.time_left_seconds ?? block.retry_after_seconds);
  const leftMs = num(block.time_left_ms) ?? (leftSeconds === undefined ? undefined : leftSeconds * 1000);
  const row: AgentRow = {
    spiffeId: str(a.spiffe_id) ?? '?',
    blocked: block.blocked === true || a.blocked === true,
  };
  const set = <K extends keyof AgentRow>(k: K, v: AgentRow[K] | undefined) => {
    if (v !== undefined) row[k] = v;
  };
  set('firstSeen', str(a.first_seen));
  set('lastSeen', str(a.last_seen));
  set('callsLastMinute', num(a.calls_last_minute));
  set('bucketLevel', num(bucket.level ?? bucket.tokens));
  set('bucketCapacity', num(bucket.capacity));
  set('reason', str(block.reason));
  set('timeLeftMs', leftMs);
  set('consecutiveErrors', num(block.consecutive_errors ?? a.consecutive_errors));
  return row;
}

async function loadAgents(): Promise<AgentRow[]> {
  const rows: AgentRow[] = [];
  let cursor: string | undefined;
  // A few pages at most: the list is bounded by the API; the page shows the first 500.
  for (let page = 0; page < 5; page++) {
    const q = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const { data } = await rest<{ agents?: Raw[]; items?: Raw[]; next_cursor?: string | null }>(
      `/api/v2/operator/agents?${q}`,
    );
    rows.push(...(data.agents ?? data.items ?? []).map(agentRow));
    cursor = data.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return rows;
}

export function AgentsPage() {
  const agents = useAsync(loadAgents, []);
  const unblock = useAction((spiffeId: string) =>
    rest('/api/v2/operator/agents/unblock', { body: { spiffe_id: spiffeId } }),
  );
  const [live, setLive] = useState(true);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(agents.reload, 5000);
    return () => clearInterval(t);
  }, [live, agents.reload]);

  const rows = 'data' in agents ? agents.data : undefined;
  const blocked = rows?.filter((r) => r.blocked) ?? [];
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
          Unblocked.
        </p>
      ) : null}
      {agents.state === 'error' ? <ProblemView error={agents.error} /> : null}
      {!rows && agents.state === 'loading' ? <Loading what="agents" /> : null}
      {rows && rows.length === 0 ? (
        <Empty>No agent has called the purchase gateway since the gateway started.</Empty>
      ) : null}
      {rows && blocked.length > 0 ? (
        <>
          <h2>Blocked ({blocked.length})</h2>
          <ul class="cards" aria-label="Blocked agents">
            {blocked.map((a) => (
              <li class="card blocked" key={a.spiffeId} data-testid="blocked-agent">
                <code>{a.spiffeId}</code>
                <p>
                  {a.reason ?? 'blocked'}
                  {a.consecutiveErrors !== undefined
                    ? ` after ${a.consecutiveErrors} consecutive errors`
                    : ''}
                  {a.timeLeftMs !== undefined ? ` — ${duration(a.timeLeftMs)} left` : ''}
                </p>
                <button
                  type="button"
                  disabled={unblock.state === 'loading'}
                  onClick={async () => {
                    if ((await unblock.run(a.spiffeId)) !== undefined) agents.reload();
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
          <h2>Identities seen ({rows.length})</h2>
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">SPIFFE ID</th>
                  <th scope="col">Calls / min</th>
                  <th scope="col">Token bucket</th>
                  <th scope="col">State</th>
                  <th scope="col">First seen</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((a) => (
                  <tr key={a.spiffeId}>
                    <td>
                      <code>{a.spiffeId}</code>
                    </td>
                    <td class="num">{a.callsLastMinute ?? '—'}</td>
                    <td>
                      <Bucket level={a.bucketLevel} capacity={a.bucketCapacity} />
                    </td>
                    <td>
                      {a.blocked ? <span class="tag bad">blocked</span> : <span class="tag">active</span>}
                    </td>
                    <td>
                      <Time at={a.firstSeen} />
                    </td>
                    <td>
                      <Time at={a.lastSeen} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      <p class="note">
        Spend against budget is not shown: no spend-policy query existed when this console was built.
      </p>
    </section>
  );
}

function Bucket({ level, capacity }: { level: number | undefined; capacity: number | undefined }) {
  if (level === undefined || capacity === undefined) return <span>—</span>;
  return (
    <span class="bucket">
      <meter min={0} max={capacity} value={level} aria-label="tokens left" /> {Math.floor(level)} / {capacity}
    </span>
  );
}
