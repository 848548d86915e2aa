// ipynb.js - the page's "Copy as NumPy" scripts as one Jupyter notebook (DOM-free): nbformat 4.5,
// one markdown cell (the section's heading and intro) and one code cell (its script) per section,
// in page order. Run top to bottom, it prints the numbers the page shows.

/** The notebook's file name. */
export const NOTEBOOK_FILENAME = 'mha-wasm-companion.ipynb';

/** The media type of a notebook download. */
export const NOTEBOOK_MIME = 'application/x-ipynb+json';

/** Markdown's special characters in running text, each escaped with a backslash. */
export function markdownEscape(text) {
  return String(text).replace(/[\\`*_{}[\]<>#+!|~]/g, (c) => `\\${c}`);
}

/**
 * nbformat's multi-line string: a list of lines, each with its '\n' (the last one may have
 * none), as Python's str.splitlines(keepends=True) gives them; ''.join(lines) is the text.
 */
export function sourceLines(text) {
  return String(text).match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** A cell id nbformat 4.5 accepts: 1-64 characters of letters, digits, '-' and '_'. */
export function cellId(text) {
  const id = String(text)
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return id || 'cell';
}

/** A script as a code cell's text: without its '#!' line (a notebook runs cells itself). */
function cellCode(script) {
  return String(script)
    .replace(/^#![^\n]*\n/, '')
    .replace(/\n+$/, '');
}

/** The markdown of a section: "## kicker · heading", then its intro paragraphs. */
function sectionMarkdown({ kicker, heading, intro }) {
  const title = [kicker, heading].filter(Boolean).map(markdownEscape).join(' · ');
  const paragraphs = []
    .concat(intro ?? [])
    .map((p) => markdownEscape(String(p).replace(/\s+/g, ' ').trim()))
    .filter(Boolean);
  return [`## ${title}`, ...paragraphs].join('\n\n');
}

function markdownCell(id, text) {
  return { cell_type: 'markdown', id, metadata: {}, source: sourceLines(text) };
}

function codeCell(id, text) {
  return {
    cell_type: 'code',
    execution_count: null,
    id,
    metadata: {},
    outputs: [],
    source: sourceLines(text),
  };
}

/**
 * The notebook (a plain object, nbformat 4.5) of `sections`: [{ id, kicker?, heading, intro
 * (a paragraph or a list of them), code (a complete script) }], in page order, after a title cell
 * (`title`, `lede`: markdown text, escaped here).
 */
export function buildNotebook({ title, lede = '', sections }) {
  if (!Array.isArray(sections) || sections.length === 0) {
    throw new Error('buildNotebook: no sections to put in the notebook');
  }
  const cells = [
    markdownCell(
      'title',
      [`# ${markdownEscape(title)}`, markdownEscape(lede)].filter(Boolean).join('\n\n'),
    ),
  ];
  const seen = new Set(['title']);
  for (const s of sections) {
    if (typeof s.code !== 'string' || s.code.trim() === '') {
      throw new Error(`buildNotebook: section "${s.heading ?? s.id}" has no script`);
    }
    let id = cellId(s.id ?? s.heading);
    while (seen.has(`${id}-text`)) id = cellId(`${id}-2`);
    seen.add(`${id}-text`);
    cells.push(
      markdownCell(`${id}-text`, sectionMarkdown(s)),
      codeCell(`${id}-code`, cellCode(s.code)),
    );
  }
  return {
    cells,
    metadata: {
      kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' },
      language_info: { name: 'python' },
    },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

/** The notebook as the text of a .ipynb file (JSON, one-space indent as Jupyter writes it). */
export function notebookText(notebook) {
  return `${JSON.stringify(notebook, null, 1)}\n`;
}

/** Every code cell of a notebook, joined into one program (what "Run all" executes). */
export function notebookProgram(notebook) {
  return notebook.cells
    .filter((c) => c.cell_type === 'code')
    .map((c) => c.source.join(''))
    .join('\n\n\n');
}
