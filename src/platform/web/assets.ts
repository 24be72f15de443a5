import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The web app's static files: our stylesheet and script beside this file, and htmx from its npm
// package (served by us, never a CDN). Read once at start; the name carries a content hash so a
// new release is never mixed with a cached old file.

const require = createRequire(import.meta.url);

function load(path: string) {
  const body = readFileSync(path);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
  return { body, hash };
}

const FILES = {
  css: {
    ...load(fileURLToPath(new URL('./assets/app.css', import.meta.url))),
    type: 'text/css; charset=utf-8',
  },
  app: {
    ...load(fileURLToPath(new URL('./assets/app.js', import.meta.url))),
    type: 'text/javascript; charset=utf-8',
  },
  htmx: { ...load(require.resolve('htmx.org/dist/htmx.min.js')), type: 'text/javascript; charset=utf-8' },
};

export const ASSET = {
  css: `/app/assets/app.${FILES.css.hash}.css`,
  app: `/app/assets/app.${FILES.app.hash}.js`,
  htmx: `/app/assets/htmx.${FILES.htmx.hash}.js`,
};

/** The file behind an asset address, or undefined. */
export function assetAt(path: string): { body: Buffer; type: string } | undefined {
  if (path === ASSET.css) return FILES.css;
  if (path === ASSET.app) return FILES.app;
  if (path === ASSET.htmx) return FILES.htmx;
  return undefined;
}
