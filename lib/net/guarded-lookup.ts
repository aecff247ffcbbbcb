import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { addressRange, isPrivateAddress } from './address.ts';

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** The error code of a name refused because it resolves to an address that is not public. */
export const PRIVATE_ADDRESS_CODE = 'EWEBHOOKPRIVATE';

/**
 * A DNS lookup that refuses private addresses (./address.ts), for undici's `connect.lookup`:
 * the check happens on the address the socket will connect to, so a name re-pointed after it
 * was checked (DNS rebinding) cannot reach the server's neighbours either. A name with any
 * such address is refused whole. IP literals never reach a lookup: the URL checks judge them.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) {
      const e: NodeJS.ErrnoException = new Error(
        `${hostname} resolves to a private address (${refused.address}, ${addressRange(refused.address)})`,
      );
      e.code = PRIVATE_ADDRESS_CODE;
      return callback(e, []);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
}
