import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { ApiError } from '../api.ts';
import { BASE, navigate } from '../router.ts';
import { toDate } from '../time.ts';

/** The API's refusal in words: status, title, detail, as the API sent them. */
export function ProblemView({ error }: { error: ApiError }) {
  return (
    <div class="problem" role="alert">
      <strong>
        {error.status ? `${error.status} ` : ''}
        {error.title}
      </strong>
      {error.detail ? <p>{error.detail}</p> : null}
      {error.status === 401 ? <p>Sign in again with a valid token.</p> : null}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-busy="true" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'medium',
});
export const operatorTimeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A time in the operator's time zone; the exact UTC instant on hover and for machines. */
export function Time({ at }: { at: string | number | undefined | null }) {
  if (at === undefined || at === null || at === '') return <span>—</span>;
  const d = toDate(at);
  if (Number.isNaN(d.getTime())) return <span>{String(at)}</span>;
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()}>
      {timeFormat.format(d)}
    </time>
  );
}

export function duration(ms: number): string {
  if (!(ms > 0)) return '0 s';
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** An in-console link: a real <a href> (keyboard, middle-click) that routes without a reload. */
export function Link({ to, children, ...rest }: { to: string; children: ComponentChildren; class?: string }) {
  return (
    <a
      href={`${BASE}/${to}`}
      {...rest}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/**
 * A labelled text field that shows the API's refusal of its value: marked `aria-invalid` and
 * described by the message, which sits outside the label so the field's name stays its label.
 */
export function Field(props: {
  id: string;
  label: ComponentChildren;
  value: string;
  onInput: (value: string) => void;
  /** The API's message(s) for this field; none: valid. */
  error?: string | undefined;
  placeholder?: string;
}) {
  const errorId = `${props.id}-error`;
  return (
    <div class="field">
      <label>
        {props.label}
        <input
          id={props.id}
          value={props.value}
          placeholder={props.placeholder}
          aria-invalid={Boolean(props.error)}
          aria-describedby={props.error ? errorId : undefined}
          onInput={(e) => props.onInput(e.currentTarget.value)}
        />
      </label>
      {props.error ? (
        <span class="field-error" id={errorId}>
          {props.error}
        </span>
      ) : null}
    </div>
  );
}

/** A multi-line Field (lists one a line, JSON): the same label, error and ARIA wiring. */
export function TextAreaField(props: {
  id: string;
  label: ComponentChildren;
  value: string;
  onInput: (value: string) => void;
  error?: string | undefined;
  placeholder?: string;
  rows: number;
}) {
  const errorId = `${props.id}-error`;
  return (
    <div class="field">
      <label>
        {props.label}
        <textarea
          id={props.id}
          rows={props.rows}
          spellcheck={false}
          value={props.value}
          placeholder={props.placeholder}
          aria-invalid={Boolean(props.error)}
          aria-describedby={props.error ? errorId : undefined}
          onInput={(e) => props.onInput(e.currentTarget.value)}
        />
      </label>
      {props.error ? (
        <span class="field-error" id={errorId}>
          {props.error}
        </span>
      ) : null}
    </div>
  );
}

/**
 * A destructive action asked twice: the first press turns the button into "Confirm <action>
 * <what>", the second acts. A button rather than window.confirm, which keyboard and screen-reader
 * users handle worse (docs/console.md).
 */
export function ConfirmButton({
  action,
  what,
  onConfirm,
  whatHidden = false,
}: {
  action: string;
  what: string;
  onConfirm: () => void;
  /** Name `what` for screen readers only (a long id beside which the button's place says enough). */
  whatHidden?: boolean;
}) {
  const [asked, setAsked] = useState(false);
  const object = whatHidden ? <span class="sr-only">{what}</span> : what;
  return asked ? (
    <button
      type="button"
      onClick={() => {
        setAsked(false);
        onConfirm();
      }}
    >
      Confirm {action} {object}
    </button>
  ) : (
    <button type="button" onClick={() => setAsked(true)}>
      {action.charAt(0).toUpperCase() + action.slice(1)} {object}
    </button>
  );
}
