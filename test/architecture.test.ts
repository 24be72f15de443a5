import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The one-way dependencies of docs/STYLE ("Layout", "One-way dependencies"), enforced by reading
// the imports of every source file, as TigerBeetle's tidy.zig enforces its style. Imports are
// read with the TypeScript parser rather than regular expressions, so multi-line import lists,
// comments and strings that merely look like imports are handled exactly.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FUNCTION_LINES_MAX = 80;

type Target =
  | { kind: 'repo'; path: string }
  | { kind: 'builtin'; name: string }
  | { kind: 'package'; name: string }
  | { kind: 'unknown' };

type Import = {
  /** The importing file, relative to the repository root, with forward slashes. */
  file: string;
  specifier: string;
  line: number;
  /** `import type` / `export type`: erased on compile, so no runtime dependency. */
  typeOnly: boolean;
  target: Target;
};

type RawImport = Omit<Import, 'file' | 'target'>;

const NON_LITERAL = '<non-literal>';

function parseSource(fileName: string, text: string): ts.SourceFile {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
}

function literalText(node: ts.Node | undefined): string | undefined {
  if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

function lineOf(source: ts.SourceFile, node: ts.Node): number {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
}

function isDynamicImport(node: ts.Node): node is ts.CallExpression {
  return ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword;
}

function isRequireCall(node: ts.Node): node is ts.CallExpression {
  return ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require';
}

/** The module a node imports, if it is any form of import or re-export. */
function importOf(source: ts.SourceFile, node: ts.Node): RawImport | undefined {
  const at = (specifier: string | undefined, typeOnly: boolean): RawImport => ({
    specifier: specifier ?? NON_LITERAL,
    typeOnly,
    line: lineOf(source, node),
  });
  if (ts.isImportDeclaration(node)) {
    return at(literalText(node.moduleSpecifier), node.importClause?.isTypeOnly ?? false);
  }
  if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
    return at(literalText(node.moduleSpecifier), node.isTypeOnly);
  }
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
    return at(literalText(node.moduleReference.expression), node.isTypeOnly);
  }
  if (isDynamicImport(node) || isRequireCall(node)) return at(literalText(node.arguments[0]), false);
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
    return at(literalText(node.argument.literal), true);
  }
  return undefined;
}

/** Every static import, re-export, dynamic `import()` and `require()` in a source text. */
function parseImports(fileName: string, text: string): RawImport[] {
  const source = parseSource(fileName, text);
  const found: RawImport[] = [];
  const visit = (node: ts.Node) => {
    const imported = importOf(source, node);
    if (imported) found.push(imported);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const BUILTINS = new Set(builtinModules);

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** Where a specifier points: a repository path, a node built-in or an npm package. */
function resolveTarget(file: string, specifier: string): Target {
  if (specifier === NON_LITERAL) return { kind: 'unknown' };
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    return { kind: 'repo', path: posix.normalize(posix.join(posix.dirname(file), specifier)) };
  }
  if (specifier.startsWith('/')) return { kind: 'repo', path: posix.relative(toPosix(ROOT), specifier) };
  if (specifier.startsWith('node:')) return { kind: 'builtin', name: specifier.slice('node:'.length) };
  if (BUILTINS.has(specifier)) return { kind: 'builtin', name: specifier };
  return { kind: 'package', name: packageName(specifier) };
}

function toPosix(path: string): string {
  return path.split('\\').join('/');
}

function listSourceFiles(directory: string): string[] {
  const absolute = posix.join(toPosix(ROOT), directory);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(directory, entry.name);
    if (entry.isDirectory()) return listSourceFiles(path);
    // Pages are TSX (features/<name>/pages.tsx, platform/web): held to the same rules.
    const source = entry.name.endsWith('.ts') || entry.name.endsWith('.tsx');
    return source && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function readRepoFile(file: string): string {
  return readFileSync(posix.join(toPosix(ROOT), file), 'utf8');
}

const SOURCE_FILES = listSourceFiles('src').sort();
const IMPORTS: Import[] = SOURCE_FILES.flatMap((file) =>
  parseImports(file, readRepoFile(file)).map((raw) => ({
    ...raw,
    file,
    target: resolveTarget(file, raw.specifier),
  })),
);

function describeImport(found: Import): string {
  const where = found.target.kind === 'repo' ? ` (${found.target.path})` : '';
  const type = found.typeOnly ? ' [type-only]' : '';
  return `${found.file}:${found.line} -> ${found.specifier}${where}${type}`;
}

function offenders(from: (file: string) => boolean, refuses: (found: Import) => boolean): string[] {
  return IMPORTS.filter((found) => from(found.file) && refuses(found)).map(describeImport);
}

const under = (directory: string) => (path: string) => path.startsWith(`${directory}/`);
const repoPath = (found: Import): string | undefined =>
  found.target.kind === 'repo' ? found.target.path : undefined;

/** `src/features/<feature>/<rest>` split into its parts, or undefined outside features. */
function featureOf(path: string): { feature: string; rest: string } | undefined {
  const match = /^src\/features\/([^/]+)\/(.+)$/.exec(path);
  return match ? { feature: match[1]!, rest: match[2]! } : undefined;
}

/** A file directly in a feature folder with the given name, e.g. `src/features/keys/domain.ts`. */
function featureFile(name: string) {
  return (path: string) => {
    const parts = featureOf(path);
    return parts !== undefined && parts.rest === name;
  };
}

function ownFeatureFile(found: Import, name: string): boolean {
  const importer = featureOf(found.file);
  return importer !== undefined && repoPath(found) === `src/features/${importer.feature}/${name}`;
}

/** Another feature's public surface: `src/features/<other>/index.ts`. */
function otherFeatureIndex(found: Import): boolean {
  const importer = featureOf(found.file);
  const imported = featureOf(repoPath(found) ?? '');
  return imported !== undefined && imported.rest === 'index.ts' && imported.feature !== importer?.feature;
}

// Core is pure: built-ins that reach the disk, the network or other processes are refused.
const IO_BUILTINS = ['fs', 'net', 'http', 'https', 'http2', 'dns', 'child_process', 'tls', 'dgram'];
const isIoBuiltin = (name: string) => IO_BUILTINS.some((io) => name === io || name.startsWith(`${io}/`));

describe('import parser', () => {
  it('reads multi-line, type-only, re-export, side-effect and dynamic imports, and ignores comments and strings', () => {
    const text = [
      `import {`,
      `  a,`,
      `  type B,`,
      `} from './multi.ts';`,
      `import type {`,
      `  C } from "../types.ts";`,
      `import * as everything from 'node:fs';`,
      `import './side-effect.ts';`,
      `export { d } from './re-export.ts';`,
      `export type { E } from './re-export-type.ts';`,
      `export * from '@scope/package/sub';`,
      `// import nope from './commented.ts';`,
      `/* export { nope } from './block-commented.ts'; */`,
      `const text = "import nope from './in-a-string.ts'";`,
      `async function later(name: string) {`,
      `  await import('./dynamic.ts');`,
      `  await import(name);`,
      `  return import(\`./template.ts\`);`,
      `}`,
      `type T = typeof import('./type-position.ts');`,
    ].join('\n');
    const found = parseImports('src/x/y.ts', text).map(({ specifier, typeOnly, line }) => [
      specifier,
      typeOnly,
      line,
    ]);
    expect(found).toEqual([
      ['./multi.ts', false, 1],
      ['../types.ts', true, 5],
      ['node:fs', false, 7],
      ['./side-effect.ts', false, 8],
      ['./re-export.ts', false, 9],
      ['./re-export-type.ts', true, 10],
      ['@scope/package/sub', false, 11],
      ['./dynamic.ts', false, 16],
      [NON_LITERAL, false, 17],
      ['./template.ts', false, 18],
      ['./type-position.ts', true, 20],
    ]);
    expect(resolveTarget('src/features/keys/service.ts', '../spaces/index.ts')).toEqual({
      kind: 'repo',
      path: 'src/features/spaces/index.ts',
    });
    expect(resolveTarget('src/a.ts', 'node:dns/promises')).toEqual({ kind: 'builtin', name: 'dns/promises' });
    expect(resolveTarget('src/a.ts', 'fs')).toEqual({ kind: 'builtin', name: 'fs' });
    expect(resolveTarget('src/a.ts', '@fastify/cookie')).toEqual({
      kind: 'package',
      name: '@fastify/cookie',
    });
  });

  it('finds the source tree and its imports (the rules below are not passing vacuously)', () => {
    expect(SOURCE_FILES).toContain('src/app.ts');
    expect(SOURCE_FILES.some(under('src/core'))).toBe(true);
    expect(SOURCE_FILES.some((file) => file.endsWith('.test.ts'))).toBe(false);
    expect(IMPORTS.filter((found) => found.file === 'src/app.ts').map(repoPath)).toContain(
      'src/features/keys/index.ts',
    );
  });

  it('resolves every relative import to a .ts file that exists inside the repository', () => {
    const broken = offenders(
      () => true,
      (found) => {
        const path = repoPath(found);
        return (
          path !== undefined &&
          (path.startsWith('../') || !/\.tsx?$/.test(path) || !existsSync(posix.join(toPosix(ROOT), path)))
        );
      },
    );
    expect(broken, `imports that point nowhere:\n${broken.join('\n')}`).toEqual([]);
  });
});

describe('one-way dependencies', () => {
  it('keeps src/core pure: it imports only src/core and node built-ins without I/O, and no npm package', () => {
    const bad = offenders(under('src/core'), (found) => {
      const { target } = found;
      if (target.kind === 'repo') return !under('src/core')(target.path);
      if (target.kind === 'builtin') return isIoBuiltin(target.name);
      return true;
    });
    expect(bad, `src/core must stay pure:\n${bad.join('\n')}`).toEqual([]);
  });

  it('keeps src/platform below the features and the app: it imports only src/platform and src/core', () => {
    // Covers the features, app.ts, main.ts, cli.ts and runtime.ts (and any other top-level file).
    const bad = offenders(under('src/platform'), (found) => {
      const path = repoPath(found);
      return path !== undefined && !under('src/platform')(path) && !under('src/core')(path);
    });
    expect(bad, `src/platform reaches upward:\n${bad.join('\n')}`).toEqual([]);
  });

  it('keeps every feature domain.ts pure: src/core only, plus type-only db/schema.ts and http/context.ts', () => {
    const typeOnlyAllowed = new Set(['src/platform/db/schema.ts', 'src/platform/http/context.ts']);
    // Packages that are data and pure functions (no I/O): the Unicode confusables table.
    const purePackages = new Set(['confusables']);
    const bad = offenders(featureFile('domain.ts'), (found) => {
      if (found.target.kind === 'package' && purePackages.has(found.target.name)) return false;
      const path = repoPath(found);
      if (path === undefined) return true;
      if (under('src/core')(path)) return false;
      return !(found.typeOnly && typeOnlyAllowed.has(path));
    });
    expect(bad, `domain.ts imports more than core:\n${bad.join('\n')}`).toEqual([]);
  });

  it('lets a feature store.ts reach only src/core, src/platform/db and its own domain.ts', () => {
    const bad = offenders(featureFile('store.ts'), (found) => {
      const path = repoPath(found);
      if (path === undefined) return false;
      return (
        !under('src/core')(path) && !under('src/platform/db')(path) && !ownFeatureFile(found, 'domain.ts')
      );
    });
    expect(bad, `store.ts imports outside its layer:\n${bad.join('\n')}`).toEqual([]);
  });

  it('lets a feature schemas.ts reach only schema-kit, http/context, src/core, its own domain.ts and other features’ index.ts', () => {
    // No npm package either: TypeBox comes through platform/http/schema-kit.ts.
    const allowed = new Set(['src/platform/http/schema-kit.ts', 'src/platform/http/context.ts']);
    const bad = offenders(featureFile('schemas.ts'), (found) => {
      const path = repoPath(found);
      if (path === undefined) return true;
      return (
        !allowed.has(path) &&
        !under('src/core')(path) &&
        !ownFeatureFile(found, 'domain.ts') &&
        !otherFeatureIndex(found)
      );
    });
    expect(bad, `schemas.ts imports outside its layer:\n${bad.join('\n')}`).toEqual([]);
  });

  it('keeps a feature routes.ts off its own store.ts: routes go through the service', () => {
    const bad = offenders(featureFile('routes.ts'), (found) => ownFeatureFile(found, 'store.ts'));
    expect(bad, `routes.ts imports its store directly:\n${bad.join('\n')}`).toEqual([]);
  });

  it('reaches a feature from anywhere outside it only through its index.ts', () => {
    const bad = offenders(under('src'), (found) => {
      const imported = featureOf(repoPath(found) ?? '');
      if (imported === undefined || imported.feature === featureOf(found.file)?.feature) return false;
      return imported.rest !== 'index.ts';
    });
    expect(bad, `imports past another feature's index.ts:\n${bad.join('\n')}`).toEqual([]);
  });

  it('keeps src/features/ledger free of every other feature (vacuous until the ledger exists)', () => {
    const bad = offenders(under('src/features/ledger'), (found) => {
      const imported = featureOf(repoPath(found) ?? '');
      return imported !== undefined && imported.feature !== 'ledger';
    });
    expect(bad, `the ledger imports a feature:\n${bad.join('\n')}`).toEqual([]);
  });

  it('never imports test/ or bench/ from src/', () => {
    const bad = offenders(under('src'), (found) => {
      const path = repoPath(found);
      return path !== undefined && (under('test')(path) || under('bench')(path));
    });
    expect(bad, `src imports test or bench code:\n${bad.join('\n')}`).toEqual([]);
  });
});

function isListenCall(node: ts.Node): boolean {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text === 'listen';
  return ts.isElementAccessExpression(callee) && literalText(callee.argumentExpression) === 'listen';
}

type FunctionLike = ts.FunctionLikeDeclaration & { body: ts.Block };

function isFunctionWithBlock(node: ts.Node): node is FunctionLike {
  const isFunction =
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node);
  return (
    isFunction &&
    (node as ts.FunctionLikeDeclaration).body !== undefined &&
    ts.isBlock((node as ts.FunctionLikeDeclaration).body!)
  );
}

/** A readable name: the declared name, or the variable / property / call it is passed to. */
function functionName(node: FunctionLike): string {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  let parent: ts.Node = node.parent;
  while (
    ts.isParenthesizedExpression(parent) ||
    ts.isAsExpression(parent) ||
    ts.isSatisfiesExpression(parent)
  ) {
    parent = parent.parent;
  }
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) {
    return parent.name.text;
  }
  if (ts.isCallExpression(parent)) return `callback of ${parent.expression.getText().slice(0, 40)}(…)`;
  return '<anonymous>';
}

function walk(source: ts.SourceFile, onNode: (node: ts.Node) => void) {
  const visit = (node: ts.Node) => {
    onNode(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
}

// The code that reads a members row and may vouch for it with a Member (platform/http/member.ts).
const MEMBER_MAKERS = [
  'src/platform/http/member.ts',
  'src/features/spaces/service.ts',
  'src/features/app-shell/service.ts',
];

// Markup is TSX, escaped by the renderer (src/platform/web/render.ts, the one caller of
// preact-render-to-string). A string or template holding an HTML tag, or raw HTML handed to the
// renderer, is markup built by hand. The opening tags are the ones markup is made of; placeholders
// in prose such as `<code>` or `<source>` are not tags, and every closing tag counts.
const HTML_TAG =
  /<(?:html|head|body|main|div|span|p|a|h[1-6]|table|thead|tbody|tr|td|th|ul|ol|li|strong|em|br|hr|section|form|input|button|label|select|option|textarea|script|style|meta|link|title|img|svg|dl|dt|dd)(?=[\s>/])|<\/[a-z][a-z0-9]*>/i;

/** Files that may still hold HTML in strings, and why; an entry that no longer applies fails too. */
const STRING_HTML_ALLOWED: Record<string, string> = {};

/** The text of a string or template literal, the template's holes left out. */
function literalTexts(node: ts.Node): string[] {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node))
    return [node.head.text + node.templateSpans.map((span) => `\u0000${span.literal.text}`).join('')];
  return [];
}

function htmlInStrings(file: string, text = readRepoFile(file)): string[] {
  const source = parseSource(file, text);
  const found: string[] = [];
  walk(source, (node) => {
    for (const text of literalTexts(node))
      if (HTML_TAG.test(text)) found.push(`${file}:${lineOf(source, node)} ${text.slice(0, 60)}`);
  });
  return found;
}

function rawHtmlCount(file: string): number {
  const source = parseSource(file, readRepoFile(file));
  let count = 0;
  walk(source, (node) => {
    if (ts.isJsxAttribute(node) && node.name.getText(source) === 'dangerouslySetInnerHTML') count += 1;
  });
  return count;
}

describe('source shape', () => {
  it('has only src/main.ts call .listen(): the app and everything else never open a port', () => {
    const calls: string[] = [];
    for (const file of SOURCE_FILES) {
      const source = parseSource(file, readRepoFile(file));
      walk(source, (node) => {
        if (isListenCall(node) && file !== 'src/main.ts')
          calls.push(`${file}:${lineOf(source, node)} ${node.getText(source).slice(0, 60)}`);
      });
    }
    expect(calls, `.listen( outside src/main.ts:\n${calls.join('\n')}`).toEqual([]);
  });

  it('has only spaces (requireMember) and the web shell (its one read) make a proven membership, from the members row', () => {
    const makers: string[] = [];
    for (const file of SOURCE_FILES) {
      const source = parseSource(file, readRepoFile(file));
      walk(source, (node) => {
        if (
          ts.isPropertyAccessExpression(node) &&
          node.name.text === 'fromMembersRow' &&
          !MEMBER_MAKERS.includes(file)
        )
          makers.push(`${file}:${lineOf(source, node)}`);
      });
    }
    expect(makers, `a Member made elsewhere:\n${makers.join('\n')}`).toEqual([]);
  });

  it('names a list of payment-out statuses only in payouts/domain.ts: every action asks the transition table', () => {
    const statuses = new Set([
      'awaiting_approval',
      'approved',
      'executing',
      'executed',
      'blocked',
      'rejected',
      'failed',
      'cancelled',
    ]);
    const restated: string[] = [];
    for (const file of SOURCE_FILES.filter((name) => name.startsWith('src/features/payouts/'))) {
      if (file === 'src/features/payouts/domain.ts') continue;
      const source = parseSource(file, readRepoFile(file));
      walk(source, (node) => {
        const named = ts.isArrayLiteralExpression(node)
          ? node.elements.filter((element) => ts.isStringLiteral(element) && statuses.has(element.text))
              .length
          : 0;
        const text =
          ts.isNoSubstitutionTemplateLiteral(node) ||
          ts.isTemplateHead(node) ||
          ts.isTemplateMiddle(node) ||
          ts.isTemplateTail(node)
            ? node.text
            : '';
        const inSql = [...text.matchAll(/'([a-z_]+)'/g)].filter((match) =>
          statuses.has(match[1] ?? ''),
        ).length;
        if (named >= 2 || inSql >= 2) restated.push(`${file}:${lineOf(source, node)}`);
      });
    }
    expect(restated, `a status list outside payouts/domain.ts:\n${restated.join('\n')}`).toEqual([]);
  });

  it('states who may administer or write only in src/core/roles.ts', () => {
    const comparisons = [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken];
    const comparesTo = (node: ts.Node, role: string) =>
      ts.isBinaryExpression(node) &&
      comparisons.includes(node.operatorToken.kind) &&
      [node.left, node.right].some((side) => ts.isStringLiteral(side) && side.text === role);
    const copies: string[] = [];
    for (const file of SOURCE_FILES) {
      if (file === 'src/core/roles.ts') continue;
      const source = parseSource(file, readRepoFile(file));
      walk(source, (node) => {
        const administers =
          ts.isBinaryExpression(node) &&
          node.operatorToken.kind === ts.SyntaxKind.BarBarToken &&
          ((comparesTo(node.left, 'owner') && comparesTo(node.right, 'admin')) ||
            (comparesTo(node.left, 'admin') && comparesTo(node.right, 'owner')));
        if (administers || comparesTo(node, 'viewer')) {
          copies.push(`${file}:${lineOf(source, node)} ${node.getText(source).slice(0, 60)}`);
        }
      });
    }
    expect(copies, `a role rule outside core/roles.ts:\n${copies.join('\n')}`).toEqual([]);
  });

  it(`keeps every function body at most ${FUNCTION_LINES_MAX} lines`, () => {
    const long: string[] = [];
    for (const file of SOURCE_FILES) {
      const source = parseSource(file, readRepoFile(file));
      walk(source, (node) => {
        if (!isFunctionWithBlock(node)) return;
        const first = source.getLineAndCharacterOfPosition(node.body.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.body.getEnd()).line;
        const lines = last - first + 1;
        if (lines > FUNCTION_LINES_MAX)
          long.push(`${file}:${first + 1} ${functionName(node)} (${lines} lines)`);
      });
    }
    expect(long, `functions longer than ${FUNCTION_LINES_MAX} lines:\n${long.join('\n')}`).toEqual([]);
  });

  it('builds no HTML from strings in src/: markup is TSX, escaped by the renderer', () => {
    const built = SOURCE_FILES.filter((file) => STRING_HTML_ALLOWED[file] === undefined).flatMap((file) =>
      htmlInStrings(file),
    );
    expect(built, `HTML in strings (write it as TSX):\n${built.join('\n')}`).toEqual([]);
    const stale = Object.keys(STRING_HTML_ALLOWED).filter((file) => htmlInStrings(file).length === 0);
    expect(stale, 'allowed files that no longer hold HTML in strings: drop their entries').toEqual([]);
    const raw = SOURCE_FILES.filter((file) => rawHtmlCount(file) > 0);
    expect(raw, 'raw HTML handed to the renderer (dangerouslySetInnerHTML)').toEqual([]);
    const renderers = IMPORTS.filter(
      (found) =>
        found.specifier.startsWith('preact-render-to-string') && found.file !== 'src/platform/web/render.ts',
    ).map(describeImport);
    expect(renderers, 'render through src/platform/web/render.ts').toEqual([]);
  });

  it('sees the HTML it looks for (the check above is not passing vacuously)', () => {
    const probe = (text: string) => HTML_TAG.test(text);
    expect(
      ['<div class="card">', '<p>', '<a href="x">', '</td>', '<!doctype html><html lang="en">'].map(probe),
    ).toEqual([true, true, true, true, true]);
    expect(
      ['tollbook <command>', '/link <code> there', 'import:<source>', 'Promise<void>', 'v1,<base64>'].map(
        probe,
      ),
    ).toEqual([false, false, false, false, false]);
    const sample =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the sample is source text that holds a template
      'const a = `<p>${note}</p>`;\nconst b = \'<div class="card">\' + a;\n// <p>in a comment</p>\n';
    expect(htmlInStrings('sample.ts', sample).map((hit) => hit.split(' ')[0])).toEqual([
      'sample.ts:1',
      'sample.ts:2',
    ]);
  });
});

/** The import graph's cycles: Tarjan's strongly connected components of more than one file (or a file importing itself). */
function importCycles(includeTypeOnly: boolean): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const found of IMPORTS) {
    const target = repoPath(found);
    if (target === undefined || (found.typeOnly && !includeTypeOnly)) continue;
    if (!edges.has(found.file)) edges.set(found.file, new Set());
    edges.get(found.file)?.add(target);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (;;) {
      const member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    if (component.length > 1 || edges.get(file)?.has(file)) cycles.push(component.sort());
  };
  for (const file of SOURCE_FILES) if (!index.has(file)) visit(file);
  return cycles;
}

describe('import cycles', () => {
  it('finds none among src/ files, type-only imports included', () => {
    expect(importCycles(true)).toEqual([]);
  });
});
