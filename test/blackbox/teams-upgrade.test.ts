/**
 * Upgrade by restart from the version before teams: `fixtures/before-teams/` is a data
 * directory that version wrote (its README says how), a snapshot of format 4 and records
 * after it, with three users, four connections (each made by one of them), jobs and an
 * alert rule. The first start of this version moves each user's connections into a team
 * of their own and says so; every user then reads what they read before, and only that;
 * a second start changes nothing more.
 */
import { expect, test } from 'bun:test';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { cleanUpServices, getJson, listAllJobs, login, makeDataDir, startService, TEST_TIMEOUT_MS, testWorkers } from './service-process.ts';

const dirs = cleanUpServices();
const FIXTURE = join(import.meta.dir, 'fixtures', 'before-teams');

/** Who made what in the fixture (passwords as it was made). */
const USERS = [
  { email: 'admin@example.test', password: 'admin password 1', connections: ['admin-staging'], jobs: ['admin-1'], rules: 0 },
  { email: 'alice@example.test', password: 'alice password 1', connections: ['alice-prod', 'alice-staging'], jobs: ['alice-1', 'alice-2', 'alice-3'], rules: 1 },
  { email: 'bob@example.test', password: 'bob password 12', connections: ['bob-prod'], jobs: ['bob-1'], rules: 0 },
];

/** What each user reads now: their teams with their role, connections, jobs and alert rules. */
async function whatEachReads(baseUrl: string) {
  const seen: Record<string, unknown> = {};
  for (const user of USERS) {
    const cookie = await login(baseUrl, user.email, user.password);
    const teams = (await getJson(baseUrl, '/api/teams', cookie)).body.data as Array<{ id: string; name: string; role: string }>;
    const connections = (await getJson(baseUrl, '/api/connections', cookie)).body.data as Array<{ name: string; teamId: string; role: string }>;
    const jobs = await listAllJobs(baseUrl, cookie);
    const rules = (await getJson(baseUrl, '/api/alert-rules', cookie)).body.data as unknown[];
    seen[user.email] = {
      teams: teams.map((team) => `${team.name}:${team.role}`),
      connections: connections.map((connection) => `${connection.name}:${connection.role}:${connection.teamId === teams[0]?.id ? 'own team' : connection.teamId}`),
      jobs: jobs.map((job) => job.externalId).sort(),
      rules: rules.length,
    };
  }
  return seen;
}

test('the first start moves every user\'s connections into their own team, logged once; each user reads what they read before, and only that', async () => {
  const dataDir = makeDataDir('teams-upgrade');
  dirs.push(dataDir);
  cpSync(FIXTURE, dataDir, { recursive: true });
  const env = { ADMIN_EMAIL: 'admin@example.test', ADMIN_PASSWORD: 'admin password 1', RETENTION_HOURS: '8760' };

  const first = await startService({ dataDir, env });
  // the fixture's one store read as it is; with shards it is first moved into them, whole
  if (testWorkers() === '1') expect(first.output).toMatch(/recovered: snapshot seq 12, \d+ records replayed/);
  else expect(first.output).toMatch(/recovered from snapshot \S+snapshot-00000000000000000012\.snap \(seq 12\)[\s\S]*moved 4 connections and 5 jobs from one store \(log\)/);
  expect(first.output).toContain('upgraded to teams: each of 3 users now has a team of their own (named after their email, as its admin), and the 4 connections they created are that team\'s');
  const expected = Object.fromEntries(
    USERS.map((user) => [
      user.email,
      // the instance admin also sees the other teams, as no member of them (and reads nothing of their data)
      { teams: [`${user.email}:admin`, ...(user.email === 'admin@example.test' ? ['alice@example.test:null', 'bob@example.test:null'] : [])], connections: user.connections.map((name) => `${name}:admin:own team`), jobs: user.jobs, rules: user.rules },
    ]),
  );
  expect(await whatEachReads(first.baseUrl)).toEqual(expected);
  expect(await first.stop()).toBe(0);

  const second = await startService({ dataDir, env });
  expect(second.output).not.toContain('upgraded to teams');
  expect(await whatEachReads(second.baseUrl)).toEqual(expected);
}, TEST_TIMEOUT_MS * 2);
