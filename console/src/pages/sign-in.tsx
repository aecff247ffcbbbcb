/**
 * Sign-in: paste an operator bearer token; with the embedded topology's development key, one
 * click mints a development token (POST /console/dev-token, absent in production).
 */
import { useState } from 'preact/hooks';
import { rest } from '../api.ts';
import { claimsOf, session } from '../session.ts';
import { useAction } from '../ui/async.ts';
import { ProblemView } from '../ui/parts.tsx';

export function SignIn({ devToken }: { devToken: boolean }) {
  const [text, setText] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const dev = useAction(() => rest<{ token: string }>('/console/dev-token', { method: 'POST' }));
  return (
    <section class="sign-in" aria-labelledby="sign-in-h">
      <h1 id="sign-in-h">Sign in</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const token = text.trim();
          if (!claimsOf(token)) {
            setInvalid('That is not a bearer token (a JWT: three base64url parts separated by dots).');
            return;
          }
          setInvalid(null);
          session.signIn(token);
        }}
      >
        <label for="token">Operator bearer token</label>
        <textarea
          id="token"
          rows={5}
          spellcheck={false}
          autocomplete="off"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          aria-describedby="token-help"
        />
        <p id="token-help" class="note">
          A JWT from your identity provider, or in development{' '}
          <code>npm run token -- --role orders:read …</code>. It is kept in this tab only (sessionStorage) and
          sent to the API on every call; the API decides what it may do.
        </p>
        {invalid ? (
          <p class="problem" role="alert">
            {invalid}
          </p>
        ) : null}
        <button type="submit">Sign in</button>
      </form>
      {devToken ? (
        <div class="panel">
          <p>This gateway runs the embedded topology with its development key.</p>
          <button
            type="button"
            onClick={async () => {
              const r = await dev.run();
              if (r) session.signIn(r.data.token);
            }}
          >
            Sign in with a development token
          </button>
          {dev.state === 'error' ? <ProblemView error={dev.error} /> : null}
        </div>
      ) : null}
    </section>
  );
}
