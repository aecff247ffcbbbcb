/**
 * `npm run audit:keys -- show|rotate|rotate-checkpoint|jwks`: the operator's view of the audit's
 * keys. `rotate` makes a new HMAC link key (AUDIT_KEYS_FILE): running gateways link new entries
 * with it within seconds, and every earlier key is kept, since entries are verified as long as
 * they are stored. `rotate-checkpoint` makes a new checkpoint signing key
 * (AUDIT_CHECKPOINT_KEYS_FILE); earlier ones keep verifying old checkpoints. `jwks` prints the
 * checkpoint keys' public JWKS (what /.well-known/audit-keys.json serves), for publishing it out
 * of band: `npm run audit:prove-verify` checks a proof with it alone (docs/audit-proofs.md).
 */
import '../lib/source-maps.ts';
import { checkpointKeysFile, openCheckpointKeys } from '../gateway/agent/audit/checkpoint.ts';
import { auditKeysFile, FileAuditKeys } from '../gateway/agent/audit/keys.ts';
import { systemClock } from '../lib/clock.ts';
import { ConfigError, loadConfig } from '../lib/config.ts';

const command = process.argv[2] ?? 'show';
try {
  const config = loadConfig();
  const links = FileAuditKeys.open(auditKeysFile(config), systemClock);
  const checkpoints = await openCheckpointKeys(config, systemClock);
  if (command === 'jwks') {
    console.log(JSON.stringify(checkpoints.jwks(), null, 2));
    process.exit(0);
  }
  if (command === 'rotate') console.log(`new link key ${links.rotate()}`);
  else if (command === 'rotate-checkpoint')
    console.log(`new checkpoint signing key ${await checkpoints.rotate()}`);
  else if (command !== 'show') {
    console.error(`unknown command ${command}: use show, rotate, rotate-checkpoint or jwks`);
    process.exit(2);
  }
  console.log(
    JSON.stringify(
      {
        linkKeys: links.file,
        linking: links.current().kid,
        checkpointKeys: checkpointKeysFile(config),
        signing: checkpoints.signingKey().kid,
      },
      null,
      2,
    ),
  );
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
