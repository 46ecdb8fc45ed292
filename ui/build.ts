/**
 * Builds the dashboard: `bun ui/build.ts`. A minified, content-hashed script and one
 * stylesheet (uPlot's included) from `ui/src/main.tsx` into `ui/dist/`, with what few page
 * loads need (uPlot, for the charts; the pages about people) in chunks loaded when needed; each
 * file with a gzip twin the service sends to clients that accept it, an `index.html` shell
 * naming the script and stylesheet, and `manifest.json` listing every file. Prints the
 * sizes; fails past the budgets: what every page load downloads, and the chunks loaded later.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export const UI_DIST_DIR = join(import.meta.dir, 'dist');
const ENTRY = join(import.meta.dir, 'src', 'main.tsx');
/** What every page load downloads (the script, what it imports, the stylesheet), compressed; the budget. */
export const GZIP_BUDGET_BYTES = 50 * 1024;
/** The chunks loaded when a page that needs them is opened (the charts' uPlot, the pages about people), compressed, together. */
export const LAZY_GZIP_BUDGET_BYTES = 40 * 1024;

export interface UiAsset {
  name: string;
  bytes: number;
  gzipBytes: number;
}

export interface UiManifest {
  assets: UiAsset[];
  script: string;
  stylesheet: string;
  /** chunks loaded only when a page that needs them opens (not counted in the first load's budget) */
  lazy: string[];
}

export async function buildUi(log: (line: string) => void = console.log): Promise<UiManifest> {
  rmSync(UI_DIST_DIR, { recursive: true, force: true });
  mkdirSync(UI_DIST_DIR, { recursive: true });
  const result = await Bun.build({
    entrypoints: [ENTRY],
    outdir: UI_DIST_DIR,
    target: 'browser',
    format: 'esm',
    minify: true,
    splitting: true,
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  if (!result.success) {
    throw new Error(`dashboard build failed:\n${result.logs.map((entry) => String(entry)).join('\n')}`);
  }
  const assets: UiAsset[] = [];
  for (const output of result.outputs) {
    const bytes = new Uint8Array(await output.arrayBuffer());
    const gzipped = Bun.gzipSync(bytes, { level: 9 });
    const name = basename(output.path);
    writeFileSync(join(UI_DIST_DIR, `${name}.gz`), gzipped);
    assets.push({ name, bytes: bytes.byteLength, gzipBytes: gzipped.byteLength });
  }
  const script = basename(result.outputs.find((output) => output.kind === 'entry-point' && output.path.endsWith('.js'))?.path ?? '');
  const stylesheet = assets.find((asset) => asset.name.endsWith('.css'))?.name;
  if (script === '' || stylesheet === undefined) throw new Error('dashboard build produced no script or no stylesheet');
  const eager = staticImportsOf(script);
  const lazy = assets.filter((asset) => asset.name.endsWith('.js') && asset.name !== script && !eager.has(asset.name)).map((asset) => asset.name);
  const manifest: UiManifest = { assets, script, stylesheet, lazy };
  writeFileSync(join(UI_DIST_DIR, 'index.html'), shellHtml(manifest));
  writeFileSync(join(UI_DIST_DIR, 'manifest.json'), JSON.stringify(manifest, null, 2));

  const sum = (some: UiAsset[]) => some.reduce((total, asset) => ({ bytes: total.bytes + asset.bytes, gzip: total.gzip + asset.gzipBytes }), { bytes: 0, gzip: 0 });
  const first = sum(assets.filter((asset) => !lazy.includes(asset.name)));
  const later = sum(assets.filter((asset) => lazy.includes(asset.name)));
  for (const asset of assets) log(`dashboard: ${asset.name} ${kb(asset.bytes)} (${kb(asset.gzipBytes)} gzip${lazy.includes(asset.name) ? ', loaded when its page opens' : ''})`);
  log(`dashboard: every page load ${kb(first.bytes)} (${kb(first.gzip)} gzip, budget ${kb(GZIP_BUDGET_BYTES)}); later chunks ${kb(later.bytes)} (${kb(later.gzip)} gzip, budget ${kb(LAZY_GZIP_BUDGET_BYTES)})`);
  if (first.gzip > GZIP_BUDGET_BYTES) throw new Error(`dashboard bundle is ${kb(first.gzip)} gzip, over the ${kb(GZIP_BUDGET_BYTES)} budget`);
  if (later.gzip > LAZY_GZIP_BUDGET_BYTES) throw new Error(`dashboard's later chunks are ${kb(later.gzip)} gzip, over their ${kb(LAZY_GZIP_BUDGET_BYTES)} budget`);
  return manifest;
}

/** The chunks a script imports statically (downloaded with it), and theirs, by file name. */
function staticImportsOf(script: string, seen = new Set<string>()): Set<string> {
  const text = readFileSync(join(UI_DIST_DIR, script), 'utf8');
  // a static import is `import ... from "./x.js"` or `import "./x.js"`; a dynamic one is `import("./x.js")`
  for (const match of text.matchAll(/(?:from|import)\s*["']\.\/([^"']+\.js)["']/g)) {
    if (seen.has(match[1]!)) continue;
    seen.add(match[1]!);
    staticImportsOf(match[1]!, seen);
  }
  return seen;
}

/** No inline script or style: the Content-Security-Policy allows only files of this origin. */
function shellHtml(manifest: UiManifest): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>jobwatch</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${manifest.stylesheet}">
<script type="module" src="/assets/${manifest.script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The jobwatch dashboard needs JavaScript. The JSON API is under /api.</noscript>
</body>
</html>
`;
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

if (import.meta.main) {
  try {
    await buildUi();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
