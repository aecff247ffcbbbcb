/**
 * Spend policies (issue 22): the agents' mandates (GraphQL `spendPolicies`, spend:read or
 * spend:admin), each with its current period; create, edit and delete (spend:admin). The form
 * sends what was typed: the API validates it, and its violations are shown on their fields
 * (BAD_USER_INPUT's extensions.errors, a JSON pointer each).
 */
import { useState } from 'preact/hooks';
import { graphql } from '../api.ts';
import { operation } from '../operations.ts';
import {
  EMPTY_POLICY,
  errorsByField,
  formOf,
  type PolicyForm,
  policyInput,
  type SpendPolicy,
} from '../spend-policy.ts';
import { useAction, useAsync } from '../ui/async.ts';
import { ConfirmButton, Empty, Field, Loading, ProblemView, Time } from '../ui/parts.tsx';

// Registered operations (schemas/operations/spend-policies.graphql, set-spend-policy.graphql,
// delete-spend-policy.graphql).
const LIST = operation('SpendPolicies');
const SET = operation('SetSpendPolicy');
const DELETE = operation('DeleteSpendPolicy');

const FIELDS: { name: keyof PolicyForm; label: string; hint: string }[] = [
  { name: 'subject', label: 'Subject (SPIFFE ID or prefix)', hint: 'spiffe://example.org/ns/ai/sa/buyer' },
  { name: 'currency', label: 'Currency', hint: 'USD' },
  { name: 'budget', label: 'Budget per period', hint: '2000.00' },
  { name: 'maxPerOrder', label: 'Most per order', hint: 'optional' },
  { name: 'approvalAbove', label: 'Approval above', hint: 'optional: a person approves larger orders' },
  { name: 'secondApprovalAbove', label: 'Second approval above', hint: 'optional: two approvers' },
  { name: 'expiresAt', label: 'Expires at', hint: 'optional, RFC 3339, e.g. 2027-01-01T00:00:00Z' },
  { name: 'allowedSkuPrefixes', label: 'Allowed SKU prefixes', hint: 'optional, e.g. SKU-ELC- SKU-TOL-' },
];

export function SpendPoliciesPage() {
  const list = useAsync(
    () => graphql<{ spendPolicies: SpendPolicy[] }>(LIST, { first: 500 }).then((d) => d.spendPolicies),
    [],
  );
  const [form, setForm] = useState<PolicyForm>(EMPTY_POLICY);
  const save = useAction((f: PolicyForm) =>
    graphql<{ setSpendPolicy: SpendPolicy }>(SET, { input: policyInput(f) }).then((d) => d.setSpendPolicy),
  );
  const remove = useAction((subject: string) =>
    graphql<{ deleteSpendPolicy: boolean }>(DELETE, { subject }).then((d) => ({
      subject,
      deleted: d.deleteSpendPolicy,
    })),
  );
  const fieldErrors = save.state === 'error' ? errorsByField(save.error.fieldErrors) : {};
  const unplaced = Object.keys(fieldErrors).filter(
    (k) => !FIELDS.some((f) => f.name === k) && k !== 'period',
  );

  return (
    <section aria-labelledby="spend-h">
      <h1 id="spend-h">Spend policies</h1>
      <p class="note">
        A policy limits what the orders of an agent identity, or of every identity under a prefix, may
        allocate per day or month. Orders above its approval threshold wait on the Approvals page.
      </p>
      {remove.state === 'error' ? <ProblemView error={remove.error} /> : null}
      {remove.state === 'ok' ? (
        <p role="status" class="ok">
          {remove.data.deleted
            ? `Deleted the policy of ${remove.data.subject}.`
            : `${remove.data.subject} had no policy.`}
        </p>
      ) : null}
      {list.state === 'loading' && !list.data ? <Loading what="spend policies" /> : null}
      {list.state === 'error' ? <ProblemView error={list.error} /> : null}
      {list.state === 'ok' && list.data.length === 0 ? <Empty>No spend policy is set.</Empty> : null}
      {list.data?.length ? (
        <div class="scroll">
          <table data-testid="spend-policies">
            <thead>
              <tr>
                <th scope="col">Subject</th>
                <th scope="col">Period</th>
                <th scope="col">Spent / budget</th>
                <th scope="col">Per order</th>
                <th scope="col">Approval above</th>
                <th scope="col">SKUs</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((p) => (
                <tr key={p.subject}>
                  <td>
                    <code>{p.subject}</code>
                  </td>
                  <td>{p.period}</td>
                  <td class="num">
                    {p.currentPeriod.spent} / {p.budget} {p.currency}
                  </td>
                  <td class="num">{p.maxPerOrder ?? '—'}</td>
                  <td class="num">
                    {p.approvalAbove ?? '—'}
                    {p.secondApprovalAbove ? ` (two above ${p.secondApprovalAbove})` : ''}
                  </td>
                  <td>{p.allowedSkuPrefixes?.length ? p.allowedSkuPrefixes.join(' ') : 'any'}</td>
                  <td>
                    <Time at={p.expiresAt} />
                  </td>
                  <td>
                    <button
                      type="button"
                      onClick={() => {
                        setForm(formOf(p));
                        save.reset();
                        document.getElementById('policy-subject')?.focus();
                      }}
                    >
                      Edit {p.subject}
                    </button>{' '}
                    <ConfirmButton
                      action="delete"
                      what={p.subject}
                      onConfirm={() => void remove.run(p.subject).then(() => list.reload())}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}

      <h2>Create or replace a policy</h2>
      <form
        class="filters"
        aria-label="Spend policy"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run(form).then((r) => r && list.reload());
        }}
      >
        {FIELDS.map((f) => (
          <Field
            key={f.name}
            id={`policy-${f.name}`}
            label={f.label}
            placeholder={f.hint}
            value={form[f.name]}
            error={fieldErrors[f.name]?.join('; ')}
            onInput={(v) => setForm({ ...form, [f.name]: v })}
          />
        ))}
        <label>
          Period
          <select
            value={form.period}
            onChange={(e) =>
              setForm({ ...form, period: e.currentTarget.value === 'MONTH' ? 'MONTH' : 'DAY' })
            }
          >
            <option value="DAY">day</option>
            <option value="MONTH">month</option>
          </select>
        </label>
        <button type="submit" disabled={save.state === 'loading'}>
          Save policy
        </button>
        <button
          type="button"
          onClick={() => {
            setForm(EMPTY_POLICY);
            save.reset();
          }}
        >
          Clear
        </button>
      </form>
      {save.state === 'error' ? (
        unplaced.length || save.error.fieldErrors.length === 0 ? (
          <ProblemView error={save.error} />
        ) : (
          <p class="problem" role="alert">
            The API refuses this policy: see the fields marked.
          </p>
        )
      ) : null}
      {save.state === 'ok' ? (
        <p role="status" class="ok">
          Saved the policy of {save.data.subject}.
        </p>
      ) : null}
    </section>
  );
}
