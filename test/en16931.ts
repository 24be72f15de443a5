import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The official EN 16931 business rules (the European Commission's Schematron, published as
// XSLT 2.0) as a test oracle. Each stylesheet is compiled once to SaxonJS's SEF form by the
// xslt3 compiler and cached on disk under the stylesheet's SHA-256, so only the first run pays
// the ~20 s; documents are then validated in this process by SaxonJS, without spawning.

const require = createRequire(import.meta.url);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the stylesheets live: the shared vendor folder beside the repository. */
export const EN16931_VENDOR_DIR =
  process.env.EN16931_VENDOR_DIR ?? resolve(root, '..', '..', 'shared', 'vendor', 'en16931');

const STYLESHEETS = {
  cii: 'EN16931-CII-validation.xslt',
  ubl: 'EN16931-UBL-validation.xslt',
} as const;

export type Syntax = keyof typeof STYLESHEETS;

/** One broken rule: its id (`BR-CO-15`), where it broke, and the rule's sentence. */
export type FailedAssert = { id: string; flag: string; location: string; text: string };

type SaxonApi = {
  transform(
    options: { stylesheetInternal: unknown; sourceText: string; destination: 'serialized' },
    mode: 'sync',
  ): { principalResult: string };
};

const saxon = require('saxon-js') as SaxonApi;
const execFileAsync = promisify(execFile);
const compiled = new Map<Syntax, Promise<unknown>>();

function vendorDirectory(): string {
  // The worktree may sit at a different depth than the main checkout: look upwards too.
  if (existsSync(join(EN16931_VENDOR_DIR, STYLESHEETS.cii))) return EN16931_VENDOR_DIR;
  let dir = root;
  for (let depth = 0; depth < 5; depth++) {
    const candidate = join(dir, 'shared', 'vendor', 'en16931');
    if (existsSync(join(candidate, STYLESHEETS.cii))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`EN 16931 stylesheets not found (looked in ${EN16931_VENDOR_DIR} and above ${root})`);
}

/** The vendor folder's official example of a syntax (a document that passes). */
export function vendorExample(syntax: Syntax): string {
  return readFileSync(join(vendorDirectory(), `example-${syntax}.xml`), 'utf8');
}

async function compileOnce(syntax: Syntax): Promise<unknown> {
  const xsltPath = join(vendorDirectory(), STYLESHEETS[syntax]);
  const hash = createHash('sha256').update(readFileSync(xsltPath)).digest('hex');
  const cacheDir = join(root, 'node_modules', '.cache', 'tollbook-en16931');
  const sefPath = join(cacheDir, `${hash}.sef.json`);
  if (!existsSync(sefPath)) {
    mkdirSync(cacheDir, { recursive: true });
    // Written under a temporary name and renamed: two test processes compiling at once never
    // read a half-written file.
    const partial = `${sefPath}.${process.pid}.partial`;
    const xslt3 = join(dirname(require.resolve('xslt3/package.json')), 'xslt3.js');
    await execFileAsync(
      process.execPath,
      [xslt3, `-xsl:${xsltPath}`, `-export:${partial}`, '-nogo', '-relocate:on'],
      { maxBuffer: 64 * 1024 * 1024, timeout: 300_000 },
    );
    renameSync(partial, sefPath);
  }
  return JSON.parse(readFileSync(sefPath, 'utf8'));
}

/** The compiled stylesheet of a syntax, compiled (or read from the cache) once per process. */
export function stylesheet(syntax: Syntax): Promise<unknown> {
  let found = compiled.get(syntax);
  if (found === undefined) {
    found = compileOnce(syntax);
    compiled.set(syntax, found);
  }
  return found;
}

const ATTRIBUTE = /([\w:-]+)="([^"]*)"/g;

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every svrl:failed-assert of an SVRL report. */
export function failedAsserts(svrl: string): FailedAssert[] {
  const found: FailedAssert[] = [];
  for (const match of svrl.matchAll(/<svrl:failed-assert\b([^>]*)>([\s\S]*?)<\/svrl:failed-assert>/g)) {
    const attributes = new Map<string, string>();
    for (const attribute of (match[1] ?? '').matchAll(ATTRIBUTE)) {
      attributes.set(attribute[1] ?? '', unescapeXml(attribute[2] ?? ''));
    }
    const text = /<svrl:text>([\s\S]*?)<\/svrl:text>/.exec(match[2] ?? '')?.[1] ?? '';
    found.push({
      id: attributes.get('id') ?? '',
      flag: attributes.get('flag') ?? '',
      location: attributes.get('location') ?? '',
      text: unescapeXml(text.trim()),
    });
  }
  return found;
}

/** Runs the syntax's EN 16931 rules on a document and answers its fatal failed asserts. */
export async function validateEn16931(syntax: Syntax, xml: string): Promise<FailedAssert[]> {
  const internal = await stylesheet(syntax);
  const result = saxon.transform(
    { stylesheetInternal: internal, sourceText: xml, destination: 'serialized' },
    'sync',
  );
  return failedAsserts(result.principalResult).filter((failure) => failure.flag === 'fatal');
}

/** The failures in a line each, for a test's message: `BR-CO-15 at /Invoice: the rule`. */
export function describeFailures(failures: readonly FailedAssert[]): string {
  return failures.map((failure) => `${failure.id} at ${failure.location}: ${failure.text}`).join('\n');
}
