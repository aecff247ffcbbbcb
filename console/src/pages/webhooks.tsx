/**
 * Webhooks (issue 22): the endpoints that receive order events (GraphQL `webhookEndpoints`,
 * webhooks:admin), one endpoint's deliveries with their status and attempts, replay of a
 * delivery, a new signing secret, disabling an endpoint, and registering one. A secret is shown
 * once, as the API answers it, and never again (docs/webhooks.md).
 */
import { useState } from 'preact/hooks';
import { graphql } from '../api.ts';
import { operation } from '../operations.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { ConfirmButton, Empty, Loading, ProblemView, Time } from '../ui/parts.tsx';

// Registered operations (schemas/operations/webhook-*.graphql and the four mutations).
const ENDPOINTS = operation('WebhookEndpoints');
const DELIVERIES = operation('WebhookDeliveries');
const REGISTER = operation('RegisterWebhookEndpoint');
const ROTATE = operation('RotateWebhookSecret');
const DISABLE = operation('DisableWebhookEndpoint');
const REPLAY = operation('ReplayWebhookDelivery');

const PREFIX = 'com.agent-commerce.procurement.';
export const EVENT_TYPES = [
  'OrderPlaced',
  'OrderCancelled',
  'OrderApprovalRequested',
  'OrderApproved',
  'OrderRejected',
  'OrderExpired',
].map((t) => PREFIX + t);

interface Endpoint {
  endpointId: string;
  url: string;
  eventTypes: string[];
  description: string | null;
  status: 'ACTIVE' | 'DISABLED';
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
}

interface Delivery {
  deliveryId: string;
  eventId: string;
  eventType: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  attempts: number;
  replays: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

const short = (type: string) => (type.startsWith(PREFIX) ? type.slice(PREFIX.length) : type);

export function WebhooksPage() {
  const endpoints = useAsync(
    () => graphql<{ webhookEndpoints: Endpoint[] }>(ENDPOINTS).then((d) => d.webhookEndpoints),
    [],
  );
  const [selected, setSelected] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const act = useAction(async (kind: 'rotate' | 'disable', e: Endpoint) => {
    if (kind === 'rotate') {
      const r = await graphql<{ rotateWebhookSecret: { signingSecret: string } }>(ROTATE, {
        endpointId: e.endpointId,
      });
      setSecret({ url: e.url, secret: r.rotateWebhookSecret.signingSecret });
      return `New signing secret for ${e.url}.`;
    }
    await graphql(DISABLE, { endpointId: e.endpointId });
    return `Disabled ${e.url}.`;
  });
  const run = (kind: 'rotate' | 'disable', e: Endpoint) => {
    setSecret(null);
    void act.run(kind, e).then(() => endpoints.reload());
  };
  const current = endpoints.data?.find((e) => e.endpointId === selected);

  return (
    <section aria-labelledby="webhooks-h">
      <h1 id="webhooks-h">Webhooks</h1>
      {act.state === 'error' ? <ProblemView error={act.error} /> : null}
      {act.state === 'ok' ? (
        <p role="status" class="ok">
          {act.data}
        </p>
      ) : null}
      {secret ? <SecretView {...secret} /> : null}
      <h2>Endpoints</h2>
      {endpoints.state === 'loading' && !endpoints.data ? <Loading what="webhook endpoints" /> : null}
      {endpoints.state === 'error' ? <ProblemView error={endpoints.error} /> : null}
      {endpoints.state === 'ok' && endpoints.data.length === 0 ? (
        <Empty>No endpoint is registered.</Empty>
      ) : null}
      {endpoints.data?.length ? (
        <ul class="cards" data-testid="webhook-endpoints">
          {endpoints.data.map((e) => (
            <li key={e.endpointId} class={`card ${e.status === 'DISABLED' ? 'blocked' : ''}`}>
              <p>
                <code>{e.url}</code>{' '}
                <span class={`tag ${e.status === 'ACTIVE' ? 'good' : 'bad'}`}>{e.status}</span>
              </p>
              {e.description ? <p>{e.description}</p> : null}
              <p class="muted">
                {e.eventTypes.map(short).join(', ')}; since <Time at={e.createdAt} />
                {e.disabledAt ? (
                  <>
                    ; disabled <Time at={e.disabledAt} /> ({e.disabledReason})
                  </>
                ) : null}
              </p>
              <div class="toolbar">
                <button
                  type="button"
                  aria-pressed={selected === e.endpointId}
                  onClick={() => setSelected(e.endpointId)}
                >
                  Deliveries of {e.url}
                </button>
                {e.status === 'ACTIVE' ? (
                  <>
                    <button type="button" onClick={() => run('rotate', e)}>
                      Rotate secret of {e.url}
                    </button>
                    <ConfirmButton action="disable" what={e.url} onConfirm={() => run('disable', e)} />
                  </>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      ) : null}
      {current ? <Deliveries endpoint={current} /> : null}
      <Register
        onRegistered={(url, s) => {
          setSecret({ url, secret: s });
          endpoints.reload();
        }}
      />
    </section>
  );
}

function SecretView({ url, secret }: { url: string; secret: string }) {
  return (
    <div class="panel good" role="status" data-testid="signing-secret">
      <p>
        Signing secret of <code>{url}</code>, shown this once: store it with the receiver now.
      </p>
      <p>
        <code>{secret}</code>
      </p>
    </div>
  );
}

function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const [status, setStatus] = useState('');
  const list = useAsync(
    () =>
      graphql<{ webhookDeliveries: Delivery[] }>(DELIVERIES, {
        endpointId: endpoint.endpointId,
        status: status || null,
        limit: 50,
      }).then((d) => d.webhookDeliveries),
    [endpoint.endpointId, status],
  );
  const replay = useAction((id: string) =>
    graphql<{ replayWebhookDelivery: Delivery }>(REPLAY, { deliveryId: id }).then(
      (d) => d.replayWebhookDelivery,
    ),
  );
  return (
    <section class="panel" aria-labelledby="deliveries-h" data-testid="webhook-deliveries">
      <h2 id="deliveries-h">Deliveries to {endpoint.url}</h2>
      <div class="filters">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="PENDING">pending</option>
            <option value="DELIVERED">delivered</option>
            <option value="FAILED">failed</option>
          </select>
        </label>
        <button type="button" onClick={() => list.reload()}>
          Refresh
        </button>
      </div>
      {replay.state === 'error' ? <ProblemView error={replay.error} /> : null}
      {replay.state === 'ok' ? (
        <p role="status" class="ok">
          Replaying {replay.data.deliveryId}: {replay.data.status}, replay {replay.data.replays}.
        </p>
      ) : null}
      {list.state === 'loading' && !list.data ? <Loading what="deliveries" /> : null}
      {list.state === 'error' ? <ProblemView error={list.error} /> : null}
      {list.state === 'ok' && list.data.length === 0 ? <Empty>No delivery.</Empty> : null}
      {list.data?.length ? (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">
                  <span class="sr-only">Replay</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((d) => (
                <tr key={d.deliveryId}>
                  <td>
                    <Time at={d.createdAt} />
                  </td>
                  <td>
                    {short(d.eventType)}
                    <br />
                    <code class="muted">{d.eventId}</code>
                  </td>
                  <td>
                    <span
                      class={`tag ${d.status === 'DELIVERED' ? 'good' : d.status === 'FAILED' ? 'bad' : ''}`}
                    >
                      {d.status}
                    </span>
                  </td>
                  <td class="num">
                    {d.attempts}
                    {d.replays ? ` (replayed ${d.replays}×)` : ''}
                  </td>
                  <td>
                    {d.lastStatusCode ?? '—'} {d.lastError ? <span class="muted">{d.lastError}</span> : null}
                    {d.lastAttemptAt ? (
                      <>
                        <br />
                        <Time at={d.lastAttemptAt} />
                      </>
                    ) : null}
                  </td>
                  <td>
                    {d.status === 'PENDING' ? null : (
                      <button
                        type="button"
                        onClick={() => void replay.run(d.deliveryId).then(() => list.reload())}
                      >
                        Replay {d.deliveryId}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function Register({ onRegistered }: { onRegistered: (url: string, secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>(EVENT_TYPES);
  const register = useAction(() =>
    graphql<{ registerWebhookEndpoint: { endpoint: Endpoint; signingSecret: string } }>(REGISTER, {
      url: url.trim(),
      eventTypes: types,
      description: description.trim() || null,
    }).then((d) => d.registerWebhookEndpoint),
  );
  return (
    <>
      <h2>Register an endpoint</h2>
      <form
        class="filters"
        aria-label="Register a webhook endpoint"
        onSubmit={(e) => {
          e.preventDefault();
          void register.run().then((r) => {
            if (!r) return;
            onRegistered(r.endpoint.url, r.signingSecret);
            setUrl('');
            setDescription('');
          });
        }}
      >
        <label>
          Endpoint URL
          <input
            inputMode="url"
            value={url}
            placeholder="https://erp.example/hooks"
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </label>
        <label>
          Description
          <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Events</legend>
          {EVENT_TYPES.map((t) => (
            <label key={t} class="check">
              <input
                type="checkbox"
                checked={types.includes(t)}
                onChange={(e) =>
                  setTypes(e.currentTarget.checked ? [...types, t] : types.filter((x) => x !== t))
                }
              />
              {short(t)}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={register.state === 'loading'}>
          Register endpoint
        </button>
      </form>
      {register.state === 'error' ? <ProblemView error={register.error} /> : null}
    </>
  );
}
