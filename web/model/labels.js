// labels.js - axis labels of the course's figures (DOM-free).

/** 't0', 't1', ... for T positions of the course's random sequences. */
export function positionLabels(T) {
  return Array.from({ length: T }, (_, t) => `t${t}`);
}

/** 'b0 t0', 'b0 t1', ... for the rows of a (B·T, C) array. */
export function batchTokenLabels(B, T) {
  const out = [];
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) out.push(`b${b} t${t}`);
  return out;
}

/** 'h0:0', ..., 'h3:63': each of C columns with the head whose hs-wide block holds it. */
export function headColumnLabels(C, hs) {
  return Array.from({ length: C }, (_, c) => `h${Math.floor(c / hs)}:${c}`);
}

/** '0', '1', ... for n columns starting at `first`. */
export function columnLabels(n, first = 0) {
  return Array.from({ length: n }, (_, c) => String(first + c));
}
