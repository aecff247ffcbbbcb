/**
 * The platform's mandate maker of ./mandate.ts: checkout mandates (ap2-mandates.md at
 * v2026-04-08), an SD-JWT VC with key binding (@sd-jwt, ES256) over the checkout the business
 * signed, the KB-JWT's nonce its id, one SD-JWT instance for the maker's life (the test's maker,
 * test/ucp/support/mandate.ts, builds one per mandate). Plain JavaScript: it is started from the
 * load generator's own worker thread, where tsx's loader does not reach.
 *
 * Runs either as a child process (the default: ./mandate.ts starts it under SCHED_IDLE, and
 * says why) or as a worker thread (`BENCH_UCP_MANDATES=thread`, as before: nice 19 for that
 * thread only). The same requests either way: `{id, checkout}` in, `{id, mandate}` or
 * `{id, error}` out; a process says `{ready: true}` once warmed.
 */
import { createPrivateKey, randomBytes, sign } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';

const port = parentPort
  ? { on: (f) => parentPort.on('message', f), send: (m) => parentPort.postMessage(m) }
  : { on: (f) => process.on('message', f), send: (m) => process.send?.(m) };

if (parentPort) {
  // As a thread: the lowest priority for this thread only (Linux gives each thread its own
  // niceness: setpriority with the thread's id, as lib/db/pglite-worker.ts does). It does not
  // reach what the thread hands to others: V8 compiles on its own threads (and, until the signer
  // below, @sd-jwt/crypto-nodejs signed through WebCrypto in libuv's pool), at the generator's
  // priority.
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
  } catch {
    // Not Linux, or not allowed: the mandates are made at the generator's priority.
  }
}

const a = parentPort ? workerData.ap2 : JSON.parse(process.env.BENCH_UCP_AP2 ?? '{}');
const { d: _d, ...holderPublic } = a.holder;
/**
 * ES256 (the JOSE r||s form) with node:crypto's synchronous sign, as the server's lib/ap2/ecdsa.ts
 * does: @sd-jwt/crypto-nodejs's ES256.getSigner signs through WebCrypto, whose work runs in
 * libuv's pool (at the generator's priority, not the maker's) and answers a loop turn later, and
 * cost 0.6–0.8 ms of CPU a mandate against 0.4–0.5 ms this way (2,000 mandates of the bench's
 * checkout in one process, alternated, loaded machine). Same mandates: @sd-jwt still builds them.
 */
const es256 = (jwk) => {
  const key = createPrivateKey({ key: jwk, format: 'jwk' });
  return (data) =>
    sign('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
};
const sdjwt = new SDJwtVcInstance({
  hasher: digest,
  hashAlg: 'sha-256',
  saltGenerator: (n) => randomBytes(n).toString('base64url'),
  signer: es256(a.issuer),
  signAlg: 'ES256',
  kbSigner: es256(a.holder),
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

port.on((m) => {
  mandate(m.checkout).then(
    (made) => port.send({ id: m.id, mandate: made }),
    (e) => port.send({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});

if (!parentPort) {
  // Warmed before the first flow: its code compiled and its crypto's first calls made here, not
  // in the measured rounds (a fresh maker per load). A checkout of the bench's size.
  const sample = {
    id: 'cs_warm',
    line_items: Array.from({ length: 2 }, (_, i) => ({ id: `li_${i}`, n: 'x'.repeat(600) })),
  };
  for (let i = 0; i < 200; i++) await mandate(sample);
  port.send({ ready: true });
  // The generator's end closes the channel: this process ends with it.
  process.on('disconnect', () => process.exit(0));
}
