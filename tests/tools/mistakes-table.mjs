// mistakes-table.mjs - docs/notebook-check.md's table of the notebook check's diagnoses,
// generated from their records (MISTAKES in web/check/catalogue.js): one row per record, in
// the catalogue's order. tests/readme.test.mjs asserts docs/notebook-check.md holds exactly this
// table; after adding or changing a record, paste the output there.
//
//   node tests/tools/mistakes-table.mjs

import { MISTAKES } from '../../web/check/catalogue.js';

const kindOf = (m) => {
  if (m.analyses) return 'analysis';
  return m.edits ? 'known mistake' : 'link';
};

/** The Markdown table: id | kind | found at | message. */
export function mistakesTable() {
  const rows = MISTAKES.map((m) => {
    const kind = m.kind ?? kindOf(m);
    const at = m.tensors.length ? m.tensors.join(', ') : 'any';
    return `| \`${m.id}\` | ${kind} | ${at} | ${m.message.replaceAll('|', '\\|')} |`;
  });
  return ['| id | kind | found at | message |', '|---|---|---|---|', ...rows].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(mistakesTable());
