/**
 * Agent platforms as OAuth 2.0 clients on the Agents page (docs/identity-linking.md; agents:admin):
 * the registered ones, and a form that registers one (public with PKCE, or confidential with
 * private_key_jwt and its JWK Set) and shows the client_id to hand to the platform. The form is
 * shown to an operator whose token holds agents:admin; the API refuses everyone else anyway.
 */
import { useState } from 'preact/hooks';
import { ApiError, type FieldError, graphql } from '../api.ts';
import { fieldError } from '../checkout-keys.ts';
import { operation } from '../operations.ts';
import {
  authMethodInWords,
  type ClientAuthMethod,
  EMPTY_REGISTER,
  type OAuthClient,
  REGISTER_ROLE,
  type RegisterForm,
  registerInput,
} from '../platform-clients.ts';
import { claimsOf, session } from '../session.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { Empty, Field, Loading, ProblemView, TextAreaField, Time } from '../ui/parts.tsx';

// Registered operations (schemas/operations/oauth-clients.graphql, register-oauth-client.graphql).
const CLIENTS = operation('OAuthClients');
const REGISTER = operation('RegisterOAuthClient');

type Registered = Pick<OAuthClient, 'clientId' | 'name' | 'tokenEndpointAuthMethod'>;

export function PlatformClients() {
  const clients = useAsync(
    () => graphql<{ oauthClients: OAuthClient[] }>(CLIENTS).then((d) => d.oauthClients),
    [],
  );
  const token = session.token();
  const mayRegister = token ? (claimsOf(token)?.roles ?? []).includes(REGISTER_ROLE) : false;
  return (
    <section aria-labelledby="clients-h">
      <h2 id="clients-h">Platforms (OAuth 2.0 clients)</h2>
      <p class="note">
        A platform registered here can ask a buyer administrator to link it (the consent page) and then acts
        as the agent identity chosen there. Hand it its client_id and this business's metadata at
        /.well-known/oauth-authorization-server.
      </p>
      {clients.state === 'loading' && !clients.data ? <Loading what="registered platforms" /> : null}
      {clients.state === 'error' ? <ProblemView error={clients.error} /> : null}
      {clients.state === 'ok' && clients.data.length === 0 ? <Empty>No platform is registered.</Empty> : null}
      {clients.data?.length ? (
        <ul class="cards" data-testid="oauth-clients">
          {clients.data.map((c) => (
            <ClientCard key={c.clientId} client={c} />
          ))}
        </ul>
      ) : null}
      {mayRegister ? (
        <Register onRegistered={() => clients.reload()} />
      ) : (
        <p class="note">Registering a platform needs the {REGISTER_ROLE} role.</p>
      )}
    </section>
  );
}

function ClientCard({ client: c }: { client: OAuthClient }) {
  return (
    <li class="card" data-testid="oauth-client">
      <p>
        <strong>{c.name}</strong> <code>{c.clientId}</code>
      </p>
      <dl>
        <div>
          <dt>Authentication</dt>
          <dd>{authMethodInWords(c.tokenEndpointAuthMethod, c.jwksUri)}</dd>
        </div>
        {c.jwksUri ? (
          <div>
            <dt>JWK Set URL</dt>
            <dd>
              <code>{c.jwksUri}</code>
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Redirect URIs</dt>
          <dd>
            {c.redirectUris.map((u) => (
              <code key={u}>
                {u}
                <br />
              </code>
            ))}
          </dd>
        </div>
        <div>
          <dt>UCP profile</dt>
          <dd>
            <code>{c.ucpProfile}</code>
          </dd>
        </div>
        {c.registeredAt ? (
          <div>
            <dt>Registered</dt>
            <dd>
              <Time at={c.registeredAt} />
              {c.registeredBy ? ` by ${c.registeredBy}` : ''}
            </dd>
          </div>
        ) : null}
      </dl>
    </li>
  );
}

const AUTH_METHODS: readonly [ClientAuthMethod, string][] = [
  ['none', 'none: a public client (PKCE S256 only)'],
  ['private_key_jwt', 'private_key_jwt: a confidential client with its public keys'],
];

function Register({ onRegistered }: { onRegistered: () => void }) {
  const [form, setForm] = useState<RegisterForm>(EMPTY_REGISTER);
  const [registered, setRegistered] = useState<Registered | null>(null);
  const register = useAction(async (f: RegisterForm) => {
    const built = registerInput(f);
    // Not sent: the mutation would read a missing JWK Set as a public client.
    if (!built.ok)
      throw new ApiError(0, 'Not sent to the API', built.message, 'BAD_USER_INPUT', undefined, [
        { pointer: `/${built.field}`, message: built.message },
      ]);
    const d = await graphql<{ registerOAuthClient: Registered }>(REGISTER, { input: built.input });
    return d.registerOAuthClient;
  });
  const errors = register.state === 'error' ? register.error.fieldErrors : [];
  const set = (patch: Partial<RegisterForm>) => setForm({ ...form, ...patch });
  return (
    <>
      <h3>Register a platform</h3>
      {registered ? (
        <p role="status" class="ok" data-testid="registered-client">
          Registered {registered.name}: client_id <code>{registered.clientId}</code> (
          {authMethodInWords(registered.tokenEndpointAuthMethod)}). Hand the client_id to the platform.
        </p>
      ) : null}
      <form
        class="register"
        aria-label="Register a platform as an OAuth client"
        onSubmit={(e) => {
          e.preventDefault();
          setRegistered(null);
          void register.run(form).then((r) => {
            if (!r) return;
            setRegistered(r);
            setForm(EMPTY_REGISTER);
            onRegistered();
          });
        }}
      >
        <Field
          id="register-name"
          label="Platform name (shown on the consent page)"
          value={form.name}
          error={fieldError(errors, 'name')}
          placeholder="Shopping assistant"
          onInput={(v) => set({ name: v })}
        />
        <TextAreaField
          id="register-redirectUris"
          label="Redirect URIs (one a line: https, or http://127.0.0.1/… for a native app, any port)"
          rows={3}
          value={form.redirectUris}
          error={fieldError(errors, 'redirectUris')}
          placeholder="https://platform.example/oauth/callback"
          onInput={(v) => set({ redirectUris: v })}
        />
        <Field
          id="register-ucpProfile"
          label="UCP profile (URL, or origin for every profile served there)"
          value={form.ucpProfile}
          error={fieldError(errors, 'ucpProfile')}
          placeholder="https://platform.example/ucp/profile.json"
          onInput={(v) => set({ ucpProfile: v })}
        />
        <AuthMethod form={form} errors={errors} set={set} />
        <button type="submit" disabled={register.state === 'loading'}>
          Register platform
        </button>
      </form>
      {register.state === 'error' ? <ProblemView error={register.error} /> : null}
    </>
  );
}

/** The client authentication, and for private_key_jwt its keys: a JWK Set or its URL. */
function AuthMethod({
  form,
  errors,
  set,
}: {
  form: RegisterForm;
  errors: readonly FieldError[];
  set: (patch: Partial<RegisterForm>) => void;
}) {
  return (
    <>
      <fieldset>
        <legend>Client authentication</legend>
        {AUTH_METHODS.map(([method, label]) => (
          <label key={method} class="check">
            <input
              type="radio"
              name="register-auth"
              checked={form.authMethod === method}
              onChange={() => set({ authMethod: method })}
            />
            {label}
          </label>
        ))}
      </fieldset>
      {form.authMethod === 'private_key_jwt' ? (
        <>
          <TextAreaField
            id="register-jwks"
            label="JWK Set of the platform (public keys, JSON)"
            rows={6}
            value={form.jwks}
            error={fieldError(errors, 'jwks')}
            placeholder={'{"keys": [{"kty": "EC", …}]}'}
            onInput={(v) => set({ jwks: v })}
          />
          <Field
            id="register-jwksUri"
            label="…or the URL of its JWK Set (https; fetched when it authenticates)"
            value={form.jwksUri}
            error={fieldError(errors, 'jwksUri')}
            placeholder="https://platform.example/.well-known/jwks.json"
            onInput={(v) => set({ jwksUri: v })}
          />
        </>
      ) : null}
    </>
  );
}
