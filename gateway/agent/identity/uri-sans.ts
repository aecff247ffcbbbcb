import type { X509Certificate } from 'node:crypto';

/**
 * The URI entries of a certificate's subjectAltName, read from the DER of the extension
 * (OID 2.5.29.17) rather than by splitting Node's `subjectAltName` text, whose quoting of
 * commas and escapes is easy to get wrong: a SAN value containing ", URI:spiffe://…" must stay
 * one value. Minimal DER reader: only what the path to the extension needs.
 */
const SAN_OID = Buffer.from([0x06, 0x03, 0x55, 0x1d, 0x11]);

interface Tlv {
  tag: number;
  start: number;
  end: number;
}

function readTlv(buf: Buffer, at: number): Tlv {
  const tag = buf[at];
  let len = buf[at + 1];
  if (tag === undefined || len === undefined) throw new Error('truncated DER');
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error('unsupported DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (buf[start + i] ?? 0);
    start += n;
  }
  const end = start + len;
  if (end > buf.length) throw new Error('truncated DER');
  return { tag, start, end };
}

function children(buf: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const t = readTlv(buf, at);
    out.push(t);
    at = t.end;
  }
  return out;
}

export function uriSans(cert: X509Certificate): string[] {
  const der = cert.raw;
  const certificate = readTlv(der, 0);
  const tbs = children(der, certificate)[0];
  if (!tbs) throw new Error('no tbsCertificate');
  // extensions: [3] EXPLICIT (tag 0xa3) wrapping SEQUENCE OF Extension
  const explicit = children(der, tbs).find((t) => t.tag === 0xa3);
  if (!explicit) return [];
  const extensions = children(der, explicit)[0];
  if (!extensions) return [];
  const uris: string[] = [];
  for (const ext of children(der, extensions)) {
    const parts = children(der, ext);
    const oid = parts[0];
    if (!oid || !der.subarray(oid.start - 2, oid.end).equals(SAN_OID)) continue;
    const value = parts[parts.length - 1]; // OCTET STRING (after the optional critical flag)
    if (value?.tag !== 0x04) throw new Error('malformed subjectAltName');
    const names = readTlv(der, value.start);
    for (const gn of children(der, names)) {
      // uniformResourceIdentifier [6] IMPLICIT IA5String
      if (gn.tag === 0x86) uris.push(der.subarray(gn.start, gn.end).toString('latin1'));
    }
  }
  return uris;
}
