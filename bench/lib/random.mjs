/**
 * A small seeded pseudo-random generator (sfc32, seeded through a string hash), so that a dataset
 * or a sequence of requested pages is the same on every run with the same seed.
 */
export function createRandom(seed) {
  let h = 1779033703 ^ String(seed).length
  for (const ch of String(seed)) {
    h = Math.imul(h ^ ch.charCodeAt(0), 3432918353)
    h = (h << 13) | (h >>> 19)
  }
  const next32 = () => {
    h = Math.imul(h ^ (h >>> 16), 2246822507)
    h = Math.imul(h ^ (h >>> 13), 3266489909)
    h ^= h >>> 16
    return h >>> 0
  }
  let a = next32()
  let b = next32()
  let c = next32()
  let d = next32()
  const float = () => {
    a >>>= 0
    b >>>= 0
    c >>>= 0
    d >>>= 0
    let t = (a + b) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    d = (d + 1) | 0
    t = (t + d) | 0
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 15; i++) float()

  const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  return {
    /** A float in [0, 1). */
    float,
    /** An integer in [min, max], both included. */
    int: (min, max) => min + Math.floor(float() * (max - min + 1)),
    /** true with probability p. */
    chance: (p) => float() < p,
    pick: (items) => items[Math.floor(float() * items.length)],
    /** `length` random base62 characters, the alphabet of Lectern's generated ids. */
    base62: (length) => {
      let out = ''
      for (let i = 0; i < length; i++) out += BASE62[Math.floor(float() * 62)]
      return out
    },
  }
}
