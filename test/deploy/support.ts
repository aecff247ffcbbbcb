/** What the deployment recipes (Dockerfile, compose.yaml, deploy/) must agree on. */
export const ROLES = ['embedded', 'gateway', 'pricing', 'promotions', 'procurement'] as const;

/** An image reference pinned to a version: a digest, or a tag other than `latest`. */
export function isPinnedImage(ref: string): boolean {
  if (/@sha256:[a-f0-9]{64}$/.test(ref)) return true;
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon > 0 && last.slice(colon + 1) !== 'latest' && last.slice(colon + 1) !== '';
}
