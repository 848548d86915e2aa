// loss-view.js - the training loss: the chart (components/chart.js) beside its own table, so the
// chart's built-in values table starts closed.

import { lossChart } from './chart.js';

/** lossChart with its values <details> closed (the loss table beside the chart has the values). */
export function lossChartBesideTable(options) {
  const chart = lossChart(options);
  const values = chart.element.querySelector('details.chart-values');
  if (values) {
    values.open = false;
    values.dataset.touched = '1';
  }
  return chart;
}

/** Replace the chart's title text. */
export function setChartTitle(chart, text) {
  chart.element.querySelector('.chart-title')?.replaceChildren(document.createTextNode(text));
}
