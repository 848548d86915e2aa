// crc32.js - the CRC-32 of zip archives (IEEE 802.3, reflected polynomial 0xEDB88320), DOM-free.
// Every zip member records the CRC-32 of its uncompressed bytes; readNpz recomputes it to catch
// a file damaged in transfer.

/** TABLE[b]: the CRC register after shifting byte b through eight rounds of the polynomial. */
const TABLE = new Uint32Array(256).map((_, byte) => {
  let c = byte;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/** The CRC-32 of `bytes` (a Uint8Array) as an unsigned 32-bit number, as zlib.crc32 gives it. */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
