/**
 * The ids an import has written so far, as a Bloom filter: {@link mayHave} is never wrong about an
 * id it says is new, and wrong about one it says may have been written for a fraction of a percent
 * of ids. The writer asks the database about only those, instead of about every id of a million
 * submissions (a keyed read per batch), and the filter costs two bytes per id whatever the ids are.
 */
export class SeenIds {
  private readonly bits: Uint32Array
  private readonly mask: number

  /** A filter sized for `expected` ids. */
  constructor(expected: number) {
    // 16 bits per id with 4 probes: about one false "may have" in 400 ids.
    let size = 1 << 10
    while (size < expected * BITS_PER_ID && size < MAX_BITS) size *= 2
    this.bits = new Uint32Array(size / 32)
    this.mask = size - 1
  }

  add(id: string): void {
    const [first, step] = hashes(id)
    for (let probe = 0, bit = first; probe < PROBES; probe++, bit = (bit + step) >>> 0) {
      const at = bit & this.mask
      this.bits[at >>> 5] = (this.bits[at >>> 5] as number) | (1 << (at & 31))
    }
  }

  /** False when `id` was certainly never added; true when it was, or (rarely) when it was not. */
  mayHave(id: string): boolean {
    const [first, step] = hashes(id)
    for (let probe = 0, bit = first; probe < PROBES; probe++, bit = (bit + step) >>> 0) {
      const at = bit & this.mask
      if (((this.bits[at >>> 5] as number) & (1 << (at & 31))) === 0) return false
    }
    return true
  }
}

const BITS_PER_ID = 16
const PROBES = 4
/** 2^30 bits (128 MiB) at most: beyond some 67 million ids the filter just errs more often. */
const MAX_BITS = 2 ** 30

const pair: [number, number] = [0, 0]

/** Two independent 32-bit hashes of `text` (FNV-1a and a multiplicative one); the second is odd. */
function hashes(text: string): [number, number] {
  let a = 0x811c9dc5
  let b = 0x9e3779b9
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    a = Math.imul(a ^ code, 0x01000193)
    b = Math.imul(b ^ code, 0x5bd1e995)
    b ^= b >>> 15
  }
  pair[0] = a >>> 0
  pair[1] = (b | 1) >>> 0
  return pair
}
