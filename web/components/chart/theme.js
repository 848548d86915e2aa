// theme.js - the loss chart's colours.

export const LINE = '#3b528b'; // viridis blue
export const POINT = '#21918c'; // viridis teal
export const INK = '#111827';
export const GRID = '#e5e7eb';
export const AXIS = '#6b7280';
export const WHITE = '#ffffff';
