// limits.js - the ceilings of the file readers (.npy, .npz, printed text; DOM-free).
// Every reader checks them BEFORE it allocates, so a hostile file (a header promising
// 10^9 x 10^9 entries, a zip bomb) gets a clear error instead of exhausting memory.

/** Largest array accepted: its entries as float64 (a 256 MiB Float64Array, 2^25 entries). */
export const MAX_ARRAY_BYTES = 256 * 2 ** 20;

/** Most dimensions an array may have (the course uses at most 4: (B, h, T, hs)). */
export const MAX_NDIM = 8;

/** Largest .npy header accepted (NumPy itself writes ~128 bytes and reads at most 10,000). */
export const MAX_HEADER_BYTES = 65536;

/**
 * Largest .npy file (header + data) that can hold an array within MAX_ARRAY_BYTES: the ceiling on
 * the inflated bytes of one .npz member (magic 6 + version 2 + length field 4 + header).
 */
export const MAX_NPY_BYTES = MAX_ARRAY_BYTES + MAX_HEADER_BYTES + 12;

/** Largest total of all members of one .npz once inflated (two full-size arrays). */
export const MAX_NPZ_BYTES = 2 * MAX_NPY_BYTES;

/** Longest array name accepted in an .npz (without '.npy'). */
export const MAX_NAME_LENGTH = 200;
