import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * A secret the API shows once (a checkout API key, a webhook signing secret): the text, a copy
 * button, and plainly that it will not be shown again. The field is read-only and selects itself
 * on focus, so copying by hand works where the clipboard API is refused (a page not served from
 * a secure context).
 */
export function OneTimeSecret({
  label,
  secret,
  onDismiss,
  children,
  testId,
}: {
  label: string;
  secret: string;
  onDismiss: () => void;
  children: ComponentChildren;
  testId: string;
}) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  return (
    <div class="panel good secret" role="status" data-testid={testId}>
      <p>{children}</p>
      <p class="secret-warning">
        <strong>You will not see it again:</strong> copy it now and store it safely.
      </p>
      <div class="secret-row">
        <input
          readOnly
          aria-label={label}
          value={secret}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button
          type="button"
          onClick={() =>
            // No clipboard object at all outside a secure context: that is a refusal too.
            (navigator.clipboard?.writeText(secret) ?? Promise.reject(new Error('no clipboard'))).then(
              () => setCopied('yes'),
              () => setCopied('failed'),
            )
          }
        >
          Copy
        </button>
        <button type="button" class="secondary" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
      {copied === 'yes' ? <p class="ok">Copied to the clipboard.</p> : null}
      {copied === 'failed' ? (
        <p class="field-error">The browser refused the clipboard: select the text and copy it.</p>
      ) : null}
    </div>
  );
}
