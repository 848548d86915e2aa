// function-lengths.mjs - the longest functions of web/ (JS) and c/ (C), for the closing notes and
// reviews: `node tests/tools/function-lengths.mjs [count=5] [root=.]`.
// JS lengths come from ESLint's own max-lines-per-function rule run with a limit of 0 (so every
// function reports its length; nested functions count inside their parent too), C lengths from
// the definitions of the Linux brace style the code uses (a line opening with `{` at column 0
// after a signature, up to the next `}` at column 0). Both count every line, blank and comment
// lines included; the lint limit (80) skips those.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Linter } from 'eslint';

const count = Number(process.argv[2] ?? 5);
const root = process.argv[3] ?? '.';
const SKIP = new Set(['app.bundle.js', 'chunks']); // (built by make bundle)

function files(dir, ext) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP.has(name)) out.push(...files(path, ext));
    } else if (name.endsWith(ext) && !SKIP.has(name)) out.push(path);
  }
  return out;
}

function jsLengths(path) {
  const linter = new Linter({ configType: 'flat' });
  const config = {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module' },
    rules: { 'max-lines-per-function': ['error', { max: 0, IIFEs: true }] },
  };
  const messages = linter.verify(readFileSync(path, 'utf8'), config, 'file.js');
  return messages
    .filter((m) => m.ruleId === 'max-lines-per-function')
    .map((m) => {
      const name = m.message.match(/^(.*?) has too many lines/)?.[1] ?? '?';
      const lines = Number(m.message.match(/\((\d+)\)/)[1]);
      return { name, lines, where: `${relative(root, path)}:${m.line}` };
    });
}

function cLengths(path) {
  const text = readFileSync(path, 'utf8').split('\n');
  const out = [];
  for (let i = 1; i < text.length; i++) {
    if (text[i] !== '{' || !/\)\s*$/.test(text[i - 1])) continue;
    let start = i - 1;
    while (start > 0 && !/\w+\s*\(/.test(text[start])) start--;
    let end = i + 1;
    while (end < text.length && text[end] !== '}') end++;
    const name = text[start].match(/(\w+)\s*\(/)?.[1] ?? '?';
    out.push({ name, lines: end - start + 1, where: `${relative(root, path)}:${start + 1}` });
  }
  return out;
}

function report(title, all) {
  all.sort((a, b) => b.lines - a.lines);
  console.log(
    `${title}: ${all.length} functions, ${all.filter((f) => f.lines > 80).length} over 80 lines`,
  );
  for (const f of all.slice(0, count)) {
    console.log(`  ${String(f.lines).padStart(4)}  ${f.name}  (${f.where})`);
  }
}

report('web/', files(join(root, 'web'), '.js').flatMap(jsLengths));
report('c/', [...files(join(root, 'c'), '.c'), ...files(join(root, 'c'), '.h')].flatMap(cLengths));
