/**
 * An instant as the API gives it: an ISO string, or a number of Unix seconds (the spec's
 * `processed_at`, which GraphQL `processedAt` repeats); a number past 1e11 is milliseconds.
 */
export function toDate(at: string | number): Date {
  return new Date(typeof at === 'number' && at < 1e11 ? at * 1000 : at);
}
