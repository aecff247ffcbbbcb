// Runs before `npm test` (npm's `pretest`) and at the start of `.ci/run`: what the suite needs
// from the machine besides node_modules. Debian packages that are missing are installed when
// this runs as root on Debian (`apt-get update` first, as on a new machine); otherwise it stops
// at once with one line naming them. Redis on 6379 and PostgreSQL on 5432 are started when they
// are down and the machine has them, as .ci/run always did. Plain Node, no dependencies: it runs
// before `npm ci` in CI.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';

/** A command the suite runs, and the Debian package that brings it. */
const PACKAGES = [
  // The console's browser tests drive Debian's Chromium through playwright-core.
  { command: '/usr/bin/chromium', pkg: 'chromium' },
  // promtool checks and unit-tests the alert rules; a real prometheus scrapes the system.
  { command: 'promtool', pkg: 'prometheus' },
  { command: 'prometheus', pkg: 'prometheus' },
  // The durability test traces the embedded store's syncs and builds its power-loss library.
  { command: 'strace', pkg: 'strace' },
  { command: 'gcc', pkg: 'gcc' },
  { command: 'openssl', pkg: 'openssl' },
];
/** What the machine itself provides (the suite's real servers): named when missing, never installed. */
const PROVIDED = ['redis-server', 'redis-cli', 'pg_isready', 'kubectl'];

const has = (command) => {
  const r = spawnSync('sh', ['-c', `command -v "${command}"`], { stdio: 'ignore' });
  return r.status === 0;
};
const quiet = process.argv.includes('--quiet');
const say = (line) => {
  if (!quiet) console.log(line);
};

function fail(line) {
  console.error(line);
  process.exit(1);
}

const missing = [...new Set(PACKAGES.filter((p) => !has(p.command)).map((p) => p.pkg))];
if (missing.length > 0) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !has('apt-get'))
    fail(
      `npm test needs Debian packages that are not installed: ${missing.join(' ')} (as root: apt-get update && apt-get install -y ${missing.join(' ')})`,
    );
  say(`installing ${missing.join(' ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // apt's and dpkg's progress is printed only when they fail.
  const run = (args) =>
    spawnSync('apt-get', args, { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
  const update = run(['update', '-qq']);
  const install =
    update.status === 0 ? run(['install', '-y', '-qq', '--no-install-recommends', ...missing]) : update;
  if (install.status !== 0) console.error(`${install.stdout ?? ''}${install.stderr ?? ''}`.slice(-4000));
  if (install.status !== 0) fail(`apt-get could not install ${missing.join(' ')}`);
}
const absent = PROVIDED.filter((c) => !has(c));
if (absent.length > 0) fail(`npm test needs what this machine does not have: ${absent.join(' ')}`);

const reachable = (port) =>
  new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function ensureServer(name, port, start) {
  if (await reachable(port)) return;
  say(`starting ${name}`);
  const r = start();
  if (r.error || r.status !== 0) fail(`${name} is not running on 127.0.0.1:${port} and could not be started`);
  for (let i = 0; i < 30; i++) {
    if (await reachable(port)) return;
    await sleep(1000);
  }
  fail(`${name} did not come up on 127.0.0.1:${port}`);
}

await ensureServer('Redis', 6379, () => {
  mkdirSync('/var/lib/redis', { recursive: true });
  mkdirSync('/var/log/redis', { recursive: true });
  // The machine's own command (no persistence: the suite's data is throwaway).
  return spawnSync(
    'redis-server',
    [
      '--daemonize',
      'yes',
      '--bind',
      '127.0.0.1',
      '-::1',
      '--port',
      '6379',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      '/var/lib/redis',
      '--logfile',
      '/var/log/redis/ci.log',
    ],
    { stdio: 'inherit' },
  );
});
await ensureServer('PostgreSQL', 5432, () => {
  const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql') : [];
  if (versions.length === 0) return { status: 1 };
  return spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', versions[0], 'main', 'start'], {
    stdio: 'inherit',
  });
});
