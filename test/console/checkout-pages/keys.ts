/**
 * Checkout API keys on the Agents page: issued, shown once, used, given a webhook, revoked after
 * a confirmation: a part of ../checkout-pages.test.ts.
 */
import { expect, it } from 'vitest';
import { expectError, expectSession } from '../../acp/support/acp.ts';
import type { ConsoleContext } from './support.ts';

export function keysTests(ctx: ConsoleContext): void {
  it('issues a checkout API key shown once, sets its webhook, revokes it after a confirmation', async () => {
    const spiffeId = ctx.platformSpiffe('key');
    const page = await ctx.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.sys.url });
    await ctx.open(page, 'Agents');
    const keys = page.getByRole('region', { name: 'Checkout API keys (ACP and UCP platforms)' });

    // A SPIFFE ID the API refuses: its message on the field, nothing issued.
    await keys.getByLabel('Platform name').fill('Console platform');
    await keys.getByLabel('Acts as SPIFFE ID').fill('spiffe://example.org/ns/ai/sa/procurement-agent-evil');
    await keys.getByLabel('Agent ID of its orders').fill('agent-console-01');
    await keys.getByLabel('UCP profile (URL or origin; optional)').fill('https://Platform.example/');
    await keys.getByRole('button', { name: 'Issue key' }).click();
    const spiffeField = keys.getByLabel('Acts as SPIFFE ID');
    await expect.poll(() => spiffeField.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await spiffeField.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/procurement agent/);

    await spiffeField.fill(spiffeId);
    await keys.getByRole('button', { name: 'Issue key' }).click();
    const shown = page.getByTestId('issued-key');
    await shown.waitFor();
    expect(await shown.textContent()).toMatch(/You will not see it again/);
    const secretField = shown.getByLabel('Secret key of Console platform');
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^acp_ak_[0-9a-f]{24}_/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    const id = secret.split('_').slice(1, 3).join('_');

    // Listed with what it is bound to, and never its secret.
    const card = page.getByTestId('checkout-key').filter({ hasText: id });
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('Console platform');
    expect(text).toContain(spiffeId);
    expect(text).toContain('agent-console-01');
    expect(text).toMatch(/orders:create, orders:read, orders:cancel/);
    expect(text).toMatch(/ACTIVE/);
    expect(text).toMatch(/by console-developer/);
    // The UCP profile binding as the API normalised it (an origin, without its slash).
    expect(text).toMatch(/UCP profile\s*https:\/\/platform\.example(?!\/)/);
    expect(text).not.toContain(secret);
    // The key works: the platform opens a session with it.
    expectSession(await ctx.createSession(secret, [{ id: 'SKU-ABC-000001', quantity: 1 }]), 201);

    // The webhook: its signing secret shown once.
    await card.getByLabel(`Webhook URL of ${id}`).fill('https://platform.example.com/acp/webhooks');
    await card.getByRole('button', { name: `Set webhook of ${id}` }).click();
    const signing = page.getByTestId('webhook-secret');
    await signing.waitFor();
    expect(await signing.textContent()).toMatch(/You will not see it again/);
    expect(await signing.getByRole('textbox').inputValue()).toMatch(/^whsec_/);
    await card.getByText('https://platform.example.com/acp/webhooks').waitFor();
    // The secret panel goes when the operator says it is stored.
    await signing.getByRole('button', { name: 'I have stored it' }).click();
    await signing.waitFor({ state: 'detached' });

    // Revoke asks twice.
    await card.getByRole('button', { name: `Revoke ${id}` }).click();
    await card.getByRole('button', { name: `Confirm revoke ${id}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Revoked Console platform (${id})` })
      .waitFor();
    await card.getByText('REVOKED', { exact: true }).waitFor();
    const listed = await ctx.sys.gql(
      '{ checkoutApiKeys { id revokedAt revokedBy webhook { url secretSet } } }',
      {
        token: await ctx.sys.token(['agents:admin']),
      },
    );
    expect(listed.data?.checkoutApiKeys).toContainEqual({
      id,
      revokedAt: expect.any(String),
      revokedBy: 'console-developer',
      webhook: { url: 'https://platform.example.com/acp/webhooks', secretSet: true },
    });
    // The platform is refused from now on.
    expectError(await ctx.createSession(secret, [{ id: 'SKU-ABC-000001', quantity: 1 }]), 401);
    await page.context().close();
  });
}
