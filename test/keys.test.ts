import test from 'ava';
import { createWorld, type TestWorld } from './helpers/env.js';
import { runCli } from './helpers/processes.js';

let world: TestWorld;
test.before(async () => {
  world = await createWorld();
});
test.after.always(() => world?.destroy());

test.serial('keys create prints the new key once, alone on the last line, and stores only its hash', async (t) => {
  const result = await runCli(world.env, ['keys', 'create', '--name', 'reading app']);
  t.is(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split('\n');
  const key = lines.at(-1)!;
  t.regex(key, /^svc_live_[0-9a-z]+_[0-9A-Za-z]+$/);
  const kid = key.split('_')[2]!;
  const { rows } = await world.db.query<{ name: string; secret_hash: string }>('select name, secret_hash from api_keys where kid = $1', [
    kid,
  ]);
  t.is(rows[0]!.name, 'reading app');
  t.regex(rows[0]!.secret_hash, /^sha256\$/);
  t.false(rows[0]!.secret_hash.includes(key.split('_')[3]!));
  t.false(result.stderr.includes(key.split('_')[3]!), 'the secret never reaches the log');

  const list = await runCli(world.env, ['keys', 'list']);
  t.regex(list.stdout, /kid\s+name\s+created\s+revoked/);
  t.regex(list.stdout, new RegExp(`${kid}\\s+reading app\\s+\\S+Z\\s*$`, 'm'));
  t.false(list.stdout.includes(key.split('_')[3]!));

  const revoke = await runCli(world.env, ['keys', 'revoke', kid]);
  t.is(revoke.code, 0);
  const after = await runCli(world.env, ['keys', 'list']);
  t.regex(after.stdout, new RegExp(`${kid}\\s+reading app\\s+\\S+Z\\s+\\S+Z`));
});

test.serial('revoking an unknown kid fails with a message', async (t) => {
  const result = await runCli(world.env, ['keys', 'revoke', 'nosuchkid']);
  t.is(result.code, 1);
  t.regex(result.stderr, /no key with kid nosuchkid/);
});
