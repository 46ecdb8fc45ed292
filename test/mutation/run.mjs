#!/usr/bin/env node
/**
 * `npm run mutate [-- <module>...]`: one Stryker pass per part of each module of
 * modules.mjs (every module when none is named), then a table of scores to paste into the
 * docs/testing.md, "Test strength". Reports: reports/mutation/<module>-<part>.html and .json.
 *
 * The score counts killed and timed-out mutants over all valid ones (Stryker's
 * definition); timeouts are listed separately because one counts as killed only when
 * hanging is the mutant's behaviour (an endless loop), which a reader of the report checks.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODULES } from './modules.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// `persistence` runs every part of the module; `persistence:2` only its second part (the
// table then counts the other parts from their last reports)
// `--table` runs nothing and prints the table from the last reports of every part
const tableOnly = process.argv.includes('--table');
const requested = process.argv.slice(2).filter((argument) => argument !== '--table').map((argument) => argument.split(':')[0]);
const onlyParts = new Map();
for (const argument of process.argv.slice(2).filter((each) => each.includes(':'))) {
  const [name, part] = argument.split(':');
  onlyParts.set(name, (onlyParts.get(name) ?? new Set()).add(Number(part) - 1));
}
const unknown = requested.filter((name) => !(name in MODULES));
if (unknown.length > 0) {
  console.error(`unknown module ${unknown.join(', ')}; known: ${Object.keys(MODULES).join(', ')}`);
  process.exit(2);
}
const names = requested.length > 0 ? [...new Set(requested)] : Object.keys(MODULES);
if (tableOnly) for (const name of names) onlyParts.set(name, new Set());
const stryker = join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');

const rows = [];
let failed = false;
for (const name of names) {
  const startedAt = Date.now();
  const totals = count([]);
  const { what, parts } = MODULES[name];
  for (const [index, part] of parts.entries()) {
    const report = join(root, 'reports', 'mutation', `${name}-${index + 1}.json`);
    if (tableOnly || (onlyParts.has(name) && !onlyParts.get(name).has(index))) {
      if (existsSync(report)) addUp(totals, count([JSON.parse(readFileSync(report, 'utf8'))]));
      continue;
    }
    console.log(`\n=== mutate ${name} (part ${index + 1} of ${parts.length}: ${what}): ${part.mutate.join(' ')}`);
    rmSync(report, { force: true });
    const run = spawnSync(process.execPath, [stryker, 'run', 'stryker.config.mjs'], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, STRYKER_MODULE: name, STRYKER_PART: String(index) },
    });
    if (run.status !== 0 || !existsSync(report)) {
      console.error(`stryker failed for ${name} part ${index + 1} (exit ${run.status})`);
      failed = true;
      continue;
    }
    addUp(totals, count([JSON.parse(readFileSync(report, 'utf8'))]));
  }
  rows.push({ name, minutes: tableOnly ? NaN : (Date.now() - startedAt) / 60_000, ...totals });
}

console.log('\n| Module | Mutants | Killed | Timed out | Survived | No coverage | Ignored | Score | Minutes |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  if (row.total === 0) {
    console.log(`| ${row.name} | no report yet | | | | | | | |`);
    continue;
  }
  const score = (100 * (row.Killed + row.Timeout)) / Math.max(1, row.Killed + row.Timeout + row.Survived + row.NoCoverage);
  console.log(
    `| ${row.name} | ${row.total} | ${row.Killed} | ${row.Timeout} | ${row.Survived} | ${row.NoCoverage} | ${row.Ignored} | ${score.toFixed(1)}% | ${Number.isNaN(row.minutes) ? '' : row.minutes.toFixed(1)} |`,
  );
}
process.exit(failed ? 1 : 0);

function addUp(totals, more) {
  for (const key of Object.keys(totals)) totals[key] += more[key];
}

/** Mutant statuses summed over every file of mutation-testing-report-schema JSON reports. */
function count(reports) {
  const totals = { total: 0, Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, Ignored: 0, CompileError: 0, RuntimeError: 0 };
  for (const report of reports) {
    for (const file of Object.values(report.files)) {
      for (const mutant of file.mutants) {
        totals.total += 1;
        totals[mutant.status] = (totals[mutant.status] ?? 0) + 1;
      }
    }
  }
  return totals;
}
