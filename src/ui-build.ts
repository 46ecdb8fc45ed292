/** At start: build the dashboard when its files are missing (a clone started with `bun src/main.ts`). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildUi, UI_DIST_DIR } from '../ui/build.ts';

export async function ensureUiBuilt(log: (line: string) => void): Promise<void> {
  if (existsSync(join(UI_DIST_DIR, 'manifest.json'))) return;
  log('dashboard not built yet: building it');
  await buildUi(log);
}
