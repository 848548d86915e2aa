// theme.js - the inks and fonts of the heatmap (the colour scales are in ../scales.js).

export const MONO_STACK = [
  'ui-monospace',
  'SFMono-Regular',
  'Menlo',
  'Consolas',
  '"Liberation Mono"',
  '"DejaVu Sans Mono"',
  'monospace',
].join(', ');

export const INK = '#111827';
export const LABEL_INK = '#374151';
export const MUTED_INK = '#6b7280';
export const HIGHLIGHT_INK = '#111111';
export const WHITE = '#ffffff';

// masked (non-finite) cells: grey, hatched
export const HATCH_BG = '#e5e7eb';
export const HATCH_INK = '#9ca3af';
