/**
 * Builds the dashboard: `bun ui/build.ts`. A minified, content-hashed entry script and one
 * stylesheet (uPlot's included) from `ui/src/main.tsx` into `ui/dist/`, and the chunks of
 * the pages fetched on their first visit (the Queues and Metrics pages, which draw charts,
 * and uPlot with them), each with a gzip twin the service sends to clients that accept it,
 * an `index.html` shell naming the entry, and `manifest.json` listing every file. Prints
 * the sizes; fails past the budgets.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export const UI_DIST_DIR = join(import.meta.dir, 'dist');
const ENTRY = join(import.meta.dir, 'src', 'main.tsx');
/** What the browser downloads to show the first page (the entry, what it imports, the stylesheet), compressed. */
export const GZIP_BUDGET_BYTES = 50 * 1024;
/** What a page fetched on its first visit adds (its chunk and the shared chunks it imports), compressed. */
export const LAZY_PAGE_GZIP_BUDGET_BYTES = 30 * 1024;

export interface UiAsset {
  name: string;
  bytes: number;
  gzipBytes: number;
}

export interface UiManifest {
  assets: UiAsset[];
  script: string;
  stylesheet: string;
  /** compressed bytes of the first load: the entry, the chunks it imports, the stylesheet */
  firstLoadGzipBytes: number;
  /** each page chunk fetched later -> compressed bytes it adds (with the chunks it imports that the first load has not) */
  lazyPages: Record<string, number>;
}

export async function buildUi(log: (line: string) => void = console.log): Promise<UiManifest> {
  rmSync(UI_DIST_DIR, { recursive: true, force: true });
  mkdirSync(UI_DIST_DIR, { recursive: true });
  const result = await Bun.build({
    entrypoints: [ENTRY],
    outdir: UI_DIST_DIR,
    target: 'browser',
    format: 'esm',
    // pages loaded on first visit (ui/src/components/lazy-page.tsx) become chunks of their own
    splitting: true,
    minify: true,
    naming: { entry: '[name]-[hash].[ext]', chunk: 'chunk-[hash].[ext]', asset: '[name]-[hash].[ext]' },
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  if (!result.success) {
    throw new Error(`dashboard build failed:\n${result.logs.map((entry) => String(entry)).join('\n')}`);
  }
  const assets: UiAsset[] = [];
  const texts = new Map<string, string>();
  let script: string | undefined;
  for (const output of result.outputs) {
    const bytes = new Uint8Array(await output.arrayBuffer());
    const gzipped = Bun.gzipSync(bytes, { level: 9 });
    const name = basename(output.path);
    writeFileSync(join(UI_DIST_DIR, `${name}.gz`), gzipped);
    assets.push({ name, bytes: bytes.byteLength, gzipBytes: gzipped.byteLength });
    if (name.endsWith('.js')) texts.set(name, new TextDecoder().decode(bytes));
    if (output.kind === 'entry-point' && name.endsWith('.js')) script = name;
  }
  const stylesheet = assets.find((asset) => asset.name.endsWith('.css'))?.name;
  if (script === undefined || stylesheet === undefined) throw new Error('dashboard build produced no script or no stylesheet');
  const gzipOf = (names: Iterable<string>) => [...names].reduce((sum, name) => sum + assets.find((asset) => asset.name === name)!.gzipBytes, 0);
  const firstLoad = staticClosure(script, texts, new Set());
  const lazyPages: Record<string, number> = {};
  for (const name of dynamicImports(texts)) lazyPages[name] = gzipOf(staticClosure(name, texts, firstLoad));
  const manifest: UiManifest = { assets, script, stylesheet, firstLoadGzipBytes: gzipOf([...firstLoad, stylesheet]), lazyPages };
  writeFileSync(join(UI_DIST_DIR, 'index.html'), shellHtml(manifest));
  writeFileSync(join(UI_DIST_DIR, 'manifest.json'), JSON.stringify(manifest, null, 2));

  const total = assets.reduce((sum, asset) => ({ bytes: sum.bytes + asset.bytes, gzip: sum.gzip + asset.gzipBytes }), { bytes: 0, gzip: 0 });
  for (const asset of assets) log(`dashboard: ${asset.name} ${kb(asset.bytes)} (${kb(asset.gzipBytes)} gzip)`);
  log(`dashboard: total ${kb(total.bytes)} (${kb(total.gzip)} gzip); first load ${kb(manifest.firstLoadGzipBytes)} gzip, budget ${kb(GZIP_BUDGET_BYTES)}`);
  if (manifest.firstLoadGzipBytes > GZIP_BUDGET_BYTES) throw new Error(`the dashboard's first load is ${kb(manifest.firstLoadGzipBytes)} gzip, over the ${kb(GZIP_BUDGET_BYTES)} budget`);
  for (const [name, gzip] of Object.entries(lazyPages)) {
    log(`dashboard: ${name} adds ${kb(gzip)} gzip on its first visit, budget ${kb(LAZY_PAGE_GZIP_BUDGET_BYTES)}`);
    if (gzip > LAZY_PAGE_GZIP_BUDGET_BYTES) throw new Error(`the page chunk ${name} adds ${kb(gzip)} gzip, over the ${kb(LAZY_PAGE_GZIP_BUDGET_BYTES)} budget`);
  }
  return manifest;
}

/** `name` and every chunk it imports statically, transitively, leaving out those in `loaded`. */
function staticClosure(name: string, texts: Map<string, string>, loaded: Set<string>): Set<string> {
  const closure = new Set<string>();
  const visit = (each: string) => {
    if (closure.has(each) || loaded.has(each)) return;
    closure.add(each);
    for (const match of (texts.get(each) ?? '').matchAll(/\bfrom\s*"\.\/([^"]+\.js)"/g)) visit(match[1]!);
  };
  visit(name);
  return closure;
}

/** The chunks any script imports with `import()`. */
function dynamicImports(texts: Map<string, string>): Set<string> {
  const names = new Set<string>();
  for (const text of texts.values()) for (const match of text.matchAll(/\bimport\(\s*"\.\/([^"]+\.js)"\s*\)/g)) names.add(match[1]!);
  return names;
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
