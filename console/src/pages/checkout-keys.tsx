/**
 * Checkout API keys on the Agents page (docs/acp-keys.md; every operation agents:admin): the
 * keys ACP platforms call the checkout API with, issuing one (its secret key shown once),
 * revoking one (asked twice) and setting where a key's order webhooks go (the signing secret
 * shown once). The API validates; its refusal is shown on the field it names.
 */
import { useState } from 'preact/hooks';
import { graphql } from '../api.ts';
import {
  type CheckoutApiKey,
  EMPTY_ISSUE,
  fieldError,
  type IssueForm,
  issueInput,
  KEY_SCOPES,
  keysInOrder,
} from '../checkout-keys.ts';
import { operation } from '../operations.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { ConfirmButton, Empty, Field, Loading, ProblemView, Time } from '../ui/parts.tsx';
import { OneTimeSecret } from '../ui/secret.tsx';

// Registered operations (schemas/operations/checkout-api-keys.graphql, issue-checkout-api-key.graphql,
// revoke-checkout-api-key.graphql, set-checkout-webhook.graphql).
const KEYS = operation('CheckoutApiKeys');
const ISSUE = operation('IssueCheckoutApiKey');
const REVOKE = operation('RevokeCheckoutApiKey');
const WEBHOOK = operation('SetCheckoutWebhook');

type Shown = { kind: 'key' | 'webhook'; key: CheckoutApiKey; secret: string; url?: string };

export function CheckoutKeys() {
  const keys = useAsync(
    () => graphql<{ checkoutApiKeys: CheckoutApiKey[] }>(KEYS).then((d) => keysInOrder(d.checkoutApiKeys)),
    [],
  );
  const [shown, setShown] = useState<Shown | null>(null);
  const revoke = useAction((k: CheckoutApiKey) =>
    graphql<{ revokeCheckoutApiKey: { id: string; revokedAt: string } }>(REVOKE, { id: k.id }).then(
      () => `Revoked ${k.name} (${k.id}): every gateway refuses it within 5 seconds.`,
    ),
  );
  return (
    <section aria-labelledby="keys-h">
      <h2 id="keys-h">Checkout API keys (ACP and UCP platforms)</h2>
      <p class="note">
        An agent platform calls the checkout API with one of these keys and acts as its SPIFFE ID: that
        identity's spend policy, blocks and rate limit apply. A UCP platform's key is bound to its profile
        (URL, or origin for every profile served there): a UCP call naming another profile is refused.
      </p>
      {shown ? <ShownSecret shown={shown} onDismiss={() => setShown(null)} /> : null}
      {revoke.state === 'error' ? <ProblemView error={revoke.error} /> : null}
      {revoke.state === 'ok' ? (
        <p role="status" class="ok">
          {revoke.data}
        </p>
      ) : null}
      {keys.state === 'loading' && !keys.data ? <Loading what="checkout API keys" /> : null}
      {keys.state === 'error' ? <ProblemView error={keys.error} /> : null}
      {keys.state === 'ok' && keys.data.length === 0 ? <Empty>No checkout API key is issued.</Empty> : null}
      {keys.data?.length ? (
        <ul class="cards" data-testid="checkout-keys">
          {keys.data.map((k) => (
            <KeyCard
              key={k.id}
              apiKey={k}
              onRevoke={() => {
                setShown(null);
                void revoke.run(k).then(() => keys.reload());
              }}
              onWebhook={(secret, url) => {
                setShown({ kind: 'webhook', key: k, secret, url });
                keys.reload();
              }}
            />
          ))}
        </ul>
      ) : null}
      <Issue
        onIssued={(k, secret) => {
          revoke.reset();
          setShown({ kind: 'key', key: k, secret });
          keys.reload();
        }}
      />
    </section>
  );
}

function ShownSecret({ shown, onDismiss }: { shown: Shown; onDismiss: () => void }) {
  const { key: k } = shown;
  return shown.kind === 'key' ? (
    <OneTimeSecret
      label={`Secret key of ${k.name}`}
      secret={shown.secret}
      onDismiss={onDismiss}
      testId="issued-key"
    >
      Issued {k.name} (<code>{k.id}</code>). Hand this secret key to the platform: only its hash is stored.
    </OneTimeSecret>
  ) : (
    <OneTimeSecret
      label={`Signing secret of ${k.name}'s webhook`}
      secret={shown.secret}
      onDismiss={onDismiss}
      testId="webhook-secret"
    >
      {k.name}'s order webhooks go to <code>{shown.url}</code>, signed with this secret: hand it to the
      platform. A later change replaces both.
    </OneTimeSecret>
  );
}

function KeyCard({
  apiKey: k,
  onRevoke,
  onWebhook,
}: {
  apiKey: CheckoutApiKey;
  onRevoke: () => void;
  onWebhook: (secret: string, url: string) => void;
}) {
  const [url, setUrl] = useState('');
  const set = useAction(() =>
    graphql<{ setCheckoutWebhook: { signingSecret: string; apiKey: CheckoutApiKey } }>(WEBHOOK, {
      id: k.id,
      url: url.trim(),
    }).then((d) => d.setCheckoutWebhook),
  );
  const revoked = k.revokedAt !== null;
  const urlError = set.state === 'error' ? fieldError(set.error.fieldErrors, 'url') : undefined;
  return (
    <li class={`card ${revoked ? 'blocked' : ''}`} data-testid="checkout-key">
      <p>
        <strong>{k.name}</strong> <code>{k.id}</code>{' '}
        <span class={`tag ${revoked ? 'bad' : 'good'}`}>{revoked ? 'REVOKED' : 'ACTIVE'}</span>
      </p>
      <dl>
        <div>
          <dt>Acts as</dt>
          <dd>
            <code>{k.spiffeId}</code>
            <br />
            agent id {k.agentId}
          </dd>
        </div>
        <div>
          <dt>Scopes</dt>
          <dd>{k.scopes.join(', ')}</dd>
        </div>
        <div>
          <dt>Issued</dt>
          <dd>
            <Time at={k.createdAt} /> by {k.createdBy}; last used{' '}
            {k.lastUsedAt ? <Time at={k.lastUsedAt} /> : 'never'}
          </dd>
        </div>
        {revoked ? (
          <div>
            <dt>Revoked</dt>
            <dd>
              <Time at={k.revokedAt} /> by {k.revokedBy}
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Webhook</dt>
          <dd>{k.webhook ? <code>{k.webhook.url}</code> : 'none'}</dd>
        </div>
        <div>
          <dt>UCP profile</dt>
          <dd>
            {k.ucpProfile ? <code>{k.ucpProfile}</code> : 'none (ACP only: UCP refuses an unbound key)'}
          </dd>
        </div>
      </dl>
      {revoked ? null : (
        <form
          class="filters"
          aria-label={`Webhook of ${k.name} ${k.id}`}
          onSubmit={(e) => {
            e.preventDefault();
            void set.run().then((r) => {
              if (!r) return;
              setUrl('');
              onWebhook(r.signingSecret, r.apiKey.webhook?.url ?? url.trim());
            });
          }}
        >
          <Field
            id={`webhook-${k.id}`}
            label={
              <>
                {k.webhook ? 'New webhook URL' : 'Webhook URL'}
                <span class="sr-only"> of {k.id}</span>
              </>
            }
            value={url}
            error={urlError}
            placeholder="https://platform.example.com/acp/webhooks"
            onInput={setUrl}
          />
          <button type="submit" disabled={set.state === 'loading'}>
            Set webhook<span class="sr-only"> of {k.id}</span>
          </button>
          <ConfirmButton action="revoke" what={k.id} whatHidden onConfirm={onRevoke} />
        </form>
      )}
      {set.state === 'error' && !urlError ? <ProblemView error={set.error} /> : null}
    </li>
  );
}

function Issue({ onIssued }: { onIssued: (k: CheckoutApiKey, secret: string) => void }) {
  const [form, setForm] = useState<IssueForm>(EMPTY_ISSUE);
  const issue = useAction((f: IssueForm) =>
    graphql<{ issueCheckoutApiKey: { key: string; apiKey: CheckoutApiKey } }>(ISSUE, {
      input: issueInput(f),
    }).then((d) => d.issueCheckoutApiKey),
  );
  const errors = issue.state === 'error' ? issue.error.fieldErrors : [];
  const text = (name: 'name' | 'spiffeId' | 'agentId' | 'ucpProfile', label: string, placeholder: string) => (
    <Field
      id={`issue-${name}`}
      label={label}
      value={form[name]}
      error={fieldError(errors, name)}
      placeholder={placeholder}
      onInput={(v) => setForm({ ...form, [name]: v })}
    />
  );
  const scopesError = fieldError(errors, 'scopes');
  return (
    <>
      <h3>Issue a key</h3>
      <form
        class="filters"
        aria-label="Issue a checkout API key"
        onSubmit={(e) => {
          e.preventDefault();
          void issue.run(form).then((r) => {
            if (!r) return;
            onIssued(
              { ...r.apiKey, revokedAt: null, revokedBy: null, lastUsedAt: null, webhook: null },
              r.key,
            );
            setForm(EMPTY_ISSUE);
          });
        }}
      >
        {text('name', 'Platform name', 'ChatGPT')}
        {text('spiffeId', 'Acts as SPIFFE ID', 'spiffe://example.org/ns/ai/sa/procurement-agent/chatgpt')}
        {text('agentId', 'Agent ID of its orders', 'agent-chatgpt-01')}
        {text(
          'ucpProfile',
          'UCP profile (URL or origin; optional)',
          'https://platform.example/ucp/profile.json',
        )}
        <fieldset aria-describedby={scopesError ? 'issue-scopes-error' : undefined}>
          <legend>Scopes</legend>
          {KEY_SCOPES.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                checked={form.scopes.includes(s)}
                onChange={(e) =>
                  setForm({
                    ...form,
                    scopes: e.currentTarget.checked
                      ? [...form.scopes, s]
                      : form.scopes.filter((x) => x !== s),
                  })
                }
              />
              {s}
            </label>
          ))}
          {scopesError ? (
            <span class="field-error" id="issue-scopes-error">
              {scopesError}
            </span>
          ) : null}
        </fieldset>
        <button type="submit" disabled={issue.state === 'loading'}>
          Issue key
        </button>
      </form>
      {issue.state === 'error' ? <ProblemView error={issue.error} /> : null}
    </>
  );
}
