/**
 * Builds the dashboard: `bun ui/build.ts`. One minified, content-hashed script and one
 * stylesheet (uPlot's included) from `ui/src/main.tsx` into `ui/dist/`, each with a
 * gzip twin the service sends to clients that accept it, an `index.html` shell naming
 * them, and `manifest.json` listing every file. Prints the sizes; fails past the budget.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export const UI_DIST_DIR = join(import.meta.dir, 'dist');
const ENTRY = join(import.meta.dir, 'src', 'main.tsx');
/** Everything the browser downloads, compressed; the budget. */
export const GZIP_BUDGET_BYTES = 50 * 1024;

export interface UiAsset {
  name: string;
  bytes: number;
  gzipBytes: number;
}

export interface UiManifest {
  assets: UiAsset[];
  script: string;
  stylesheet: string;
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
  const script = assets.find((asset) => asset.name.endsWith('.js'))?.name;
  const stylesheet = assets.find((asset) => asset.name.endsWith('.css'))?.name;
  if (script === undefined || stylesheet === undefined) throw new Error('dashboard build produced no script or no stylesheet');
  const manifest: UiManifest = { assets, script, stylesheet };
  writeFileSync(join(UI_DIST_DIR, 'index.html'), shellHtml(manifest));
  writeFileSync(join(UI_DIST_DIR, 'manifest.json'), JSON.stringify(manifest, null, 2));

  const total = assets.reduce((sum, asset) => ({ bytes: sum.bytes + asset.bytes, gzip: sum.gzip + asset.gzipBytes }), { bytes: 0, gzip: 0 });
  for (const asset of assets) log(`dashboard: ${asset.name} ${kb(asset.bytes)} (${kb(asset.gzipBytes)} gzip)`);
  log(`dashboard: total ${kb(total.bytes)} (${kb(total.gzip)} gzip, budget ${kb(GZIP_BUDGET_BYTES)})`);
  if (total.gzip > GZIP_BUDGET_BYTES) throw new Error(`dashboard bundle is ${kb(total.gzip)} gzip, over the ${kb(GZIP_BUDGET_BYTES)} budget`);
  return manifest;
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
