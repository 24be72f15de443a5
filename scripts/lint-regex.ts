import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSync } from 'recheck';
import ts from 'typescript';

// No regular expression in src/ may backtrack: every one is checked by recheck, which finds
// exponential and polynomial (e.g. /0+$/, quadratic on "000…01") matching times. Checked are
// regular expression literals, `new RegExp("…")` with a literal source, and the `pattern`
// keyword of route schemas (AJV compiles those with the u flag). Run by `npm run lint` and by
// test/regex-safety.test.ts.

export type FoundRegex = { file: string; line: number; source: string; flags: string };
export type RegexVerdict = FoundRegex & { status: string; complexity: string };

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function literalText(node: ts.Node | undefined): string | undefined {
  if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) return node.text;
  return undefined;
}

function regexesOf(path: string): FoundRegex[] {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const file = relative(ROOT, path);
  const found: FoundRegex[] = [];
  const add = (node: ts.Node, pattern: string, flags: string) =>
    found.push({
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      source: pattern,
      flags,
    });
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(source);
      const end = literal.lastIndexOf('/');
      add(node, literal.slice(1, end), literal.slice(end + 1));
    } else if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const pattern = literalText(node.arguments?.[0]);
      if (pattern !== undefined) add(node, pattern, literalText(node.arguments?.[1]) ?? '');
    } else if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'pattern') {
      const pattern = literalText(node.initializer);
      if (pattern !== undefined) add(node, pattern, 'u');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function findRegexes(directory = join(ROOT, 'src')): FoundRegex[] {
  return sourceFiles(directory).flatMap(regexesOf);
}

export function judgeRegex(found: FoundRegex): RegexVerdict {
  // The g and y flags change where matching starts, not how it backtracks.
  const flags = found.flags.replace(/[gy]/g, '');
  const result = checkSync(found.source, flags, { timeout: 10_000 });
  const complexity =
    result.status === 'vulnerable'
      ? `${result.complexity.type}${'degree' in result.complexity ? ` (degree ${result.complexity.degree})` : ''}`
      : '';
  return { ...found, status: result.status, complexity };
}

/** Every regular expression that may backtract badly (or that recheck could not decide). */
export function unsafeRegexes(directory?: string): RegexVerdict[] {
  return findRegexes(directory)
    .map(judgeRegex)
    .filter((verdict) => verdict.status !== 'safe');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const found = findRegexes();
  const problems = found.map(judgeRegex).filter((verdict) => verdict.status !== 'safe');
  for (const problem of problems) {
    process.stderr.write(
      `${problem.file}:${problem.line} /${problem.source}/${problem.flags} is ${problem.status} ${problem.complexity}\n`,
    );
  }
  process.stdout.write(
    `lint-regex: ${found.length} regular expressions checked, ${problems.length} unsafe.\n`,
  );
  process.exit(problems.length > 0 ? 1 : 0);
}
