// start-here.js - the "Start here" box's list of which numbers match a NumPy notebook and how
// closely, from the page's one statement (model/agreement.js): a line per kind, and the reasons
// with measured examples behind a <details>. The rest of the box is static HTML (index.html).

import { el } from '../components/dom.js';
import { AGREEMENT, KINDS, PE_AGREEMENT } from '../model/agreement.js';

/** Fill the box's list (ul#start-agreement) and its "why" (details#start-why); no box: nothing. */
export function renderStartHere(doc = document) {
  const list = doc.getElementById('start-agreement');
  const why = doc.getElementById('start-why');
  if (list) {
    list.replaceChildren(
      ...KINDS.map((k) =>
        el(
          'li',
          { dataset: { agreement: k } },
          el('strong', { text: `${AGREEMENT[k].title}: ` }),
          `${AGREEMENT[k].brief}.`,
        ),
      ),
    );
  }
  if (why) {
    why.append(
      el(
        'ul',
        {},
        ...KINDS.map((k) =>
          el('li', {}, el('strong', { text: `${AGREEMENT[k].title}: ` }), AGREEMENT[k].text),
        ),
        el('li', { text: PE_AGREEMENT }),
      ),
    );
  }
}
