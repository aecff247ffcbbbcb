import { parseDictionary } from 'structured-headers';

/**
 * The `UCP-Agent` request header (overview.md, "Platform Advertisement on Request";
 * signatures.md, "Parsing Rules"): an RFC 8941 Dictionary whose `profile` member is a String
 * holding the platform profile's URL. Parsed with structured-headers, not a regex: member
 * order, parameters, other members and whitespace are the RFC's to judge.
 */
export type UcpAgentHeader = { ok: true; profileUrl: string } | { ok: false; reason: string };

export const MAX_PROFILE_URL = 2048;

export function parseUcpAgent(value: string | string[] | undefined): UcpAgentHeader {
  if (value === undefined) return { ok: false, reason: 'the UCP-Agent header is required' };
  // Several field lines are one field, joined with commas (RFC 9110 §5.3; RFC 8941 §4.2).
  const field = Array.isArray(value) ? value.join(', ') : value;
  let dict: ReturnType<typeof parseDictionary>;
  try {
    dict = parseDictionary(field);
  } catch {
    return { ok: false, reason: 'UCP-Agent is not an RFC 8941 dictionary' };
  }
  const member = dict.get('profile');
  if (!member) return { ok: false, reason: 'UCP-Agent has no profile member' };
  const url = member[0];
  if (typeof url !== 'string') return { ok: false, reason: 'UCP-Agent profile is not a string' };
  if (url.length === 0 || url.length > MAX_PROFILE_URL)
    return { ok: false, reason: `UCP-Agent profile must be 1 to ${MAX_PROFILE_URL} characters` };
  return { ok: true, profileUrl: url };
}
