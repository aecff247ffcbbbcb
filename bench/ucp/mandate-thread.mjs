/**
 * The thread of ./mandate.ts that makes checkout mandates (ap2-mandates.md at v2026-04-08): an
 * SD-JWT VC with key binding (@sd-jwt, ES256) over the checkout the business signed, the
 * KB-JWT's nonce its id, one SD-JWT instance for the thread's life (the test's maker,
 * test/ucp/support/mandate.ts, builds one per mandate). Plain JavaScript: it is started from the
 * load generator's own worker thread, where tsx's loader does not reach a new thread.
 */
import { randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { digest, ES256 } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';

/**
 * The platform's work runs at the lowest priority (nice 19), so that on a machine of two cores it
 * takes no CPU the server's threads want during the measured flows: a mandate is ~1.5 ms of CPU
 * per flow (two ECDSA signatures, the disclosure's digest), which the plain flows' generator does
 * not spend, and at the same priority it competed with the AP2 rounds' server only (issue 50's
 * runs: the generator's CPU per flow 3.4 ms with AP2 against 1.8 without). A mandate made later
 * delays only when its completion is due, which is not in any latency. Linux gives each thread
 * its own niceness (setpriority with the thread's id, as lib/db/pglite-worker.ts does);
 * elsewhere the thread keeps the process's priority.
 */
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
} catch {
  // Not Linux, or not allowed: the mandates are made at the generator's priority.
}

const a = workerData.ap2;
const { d: _d, ...holderPublic } = a.holder;
const sdjwt = new SDJwtVcInstance({
  hasher: digest,
  hashAlg: 'sha-256',
  saltGenerator: (n) => randomBytes(n).toString('base64url'),
  signer: await ES256.getSigner(a.issuer),
  signAlg: 'ES256',
  kbSigner: await ES256.getSigner(a.holder),
  kbSignAlg: 'ES256',
});

async function mandate(checkout) {
  const now = Math.floor(Date.now() / 1000);
  const issued = await sdjwt.issue(
    {
      iss: 'https://platform.example',
      iat: now,
      exp: now + 600,
      vct: 'mandate.checkout.1',
      cnf: { jwk: holderPublic },
      checkout,
    },
    { _sd: ['checkout'] },
    { header: { kid: a.kid } },
  );
  return sdjwt.present(
    issued,
    { checkout: true },
    { kb: { payload: { iat: now, aud: a.audience, nonce: checkout.id } } },
  );
}

parentPort.on('message', (m) => {
  mandate(m.checkout).then(
    (made) => parentPort.postMessage({ id: m.id, mandate: made }),
    (e) => parentPort.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});
