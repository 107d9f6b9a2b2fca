/**
 * Distinct strings numbered 0, 1, 2… in the order they were first added, packed as bytes in one
 * growing buffer and found through an open-addressing hash index held in a typed array.
 *
 * A million ids or paths cost about their UTF-8 length plus a dozen bytes each, against some sixty
 * for a `Map<string, number>` of V8 strings, and the garbage collector never has to trace them: the
 * bytes live outside the JavaScript heap and the index holds numbers only.
 *
 * Equality is exact: a string is stored as UTF-8, or, when its UTF-8 holds U+FFFD (which is also
 * what a lone surrogate, outside UTF-8, would be written as), as a `0xFF` byte (never part of UTF-8)
 * followed by its UTF-16 code units, so that two different strings never share a number.
 */
export class StringTable {
  private bytes = Buffer.allocUnsafe(1 << 16)
  private used = 0
  /** `starts[n]` is where string `n` begins; `starts[n + 1]` is where it ends. */
  private starts = new Uint32Array(1 << 10)
  /** Hash slots holding a string's number plus one; 0 marks a free slot. */
  private index = new Int32Array(1 << 11)
  /**
   * The index before the last growth, while its entries move to the larger one a few at a time
   * (each addition moves {@link MOVES_PER_ADDITION}): growing never stops the caller to rehash
   * millions of strings at once. Strings numbered from `moved` to `movedUntil` are found here.
   */
  private previous: Int32Array | null = null
  private moved = 0
  private movedUntil = 0
  private count = 0
  /** Bytes of the string encoded by the last {@link locate}, written just past the used part. */
  private encodedLength = 0

  /** How many distinct strings the table holds. */
  get size(): number {
    return this.count
  }

  /** The number of `text`, adding it when new. */
  intern(text: string): number {
    const found = this.locate(text)
    if (found >= 0) return found
    const slot = ~found
    const end = this.used + this.encodedLength
    const id = this.count
    if (id + 2 > this.starts.length) this.starts = grown(this.starts, id + 2)
    this.starts[id] = this.used
    this.starts[id + 1] = end
    this.used = end
    this.count++
    this.index[slot] = id + 1
    if (this.previous !== null) this.moveSome()
    else if (this.count * 2 > this.index.length) this.grow()
    return id
  }

  /** The number of `text`, or -1 when the table does not hold it. */
  find(text: string): number {
    const found = this.locate(text)
    return found >= 0 ? found : -1
  }

  /** The string numbered `id`. */
  get(id: number): string {
    const start = this.starts[id] as number
    const end = this.starts[id + 1] as number
    return this.bytes[start] === WIDE
      ? this.bytes.toString('utf16le', start + 1, end)
      : this.bytes.toString('utf8', start, end)
  }

  /** Whether the string numbered `id` starts with the ASCII character `char` (no string is made). */
  startsWith(id: number, char: string): boolean {
    const start = this.starts[id] as number
    return start < (this.starts[id + 1] as number) && this.bytes[start] === char.charCodeAt(0)
  }

  /**
   * Encodes `text` just past the used bytes (where it is kept if it is added), then looks it up:
   * its number, or the bitwise complement of the free hash slot where it belongs.
   */
  private locate(text: string): number {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit; the wide form 2 per unit and a marker.
    const room = this.used + text.length * 3 + 1
    if (room > this.bytes.length) {
      if (room > MAX_BYTES) throw new RangeError('StringTable: more than 4 GiB of strings')
      const bigger = Buffer.allocUnsafe(
        Math.min(MAX_BYTES, Math.max(room, Math.floor(this.bytes.length * 1.5))),
      )
      this.bytes.copy(bigger, 0, 0, this.used)
      this.bytes = bigger
    }
    const start = this.used
    let length = this.bytes.write(text, start, 'utf8')
    // A lone surrogate would be written as U+FFFD, like a real one: such strings are kept wide.
    if (hasReplacementCharacter(this.bytes, start, start + length)) {
      this.bytes[start] = WIDE
      length = 1 + this.bytes.write(text, start + 1, 'utf16le')
    }
    this.encodedLength = length
    const hash = hashBytes(this.bytes, start, start + length)
    const found = this.probe(this.index, hash, start, length)
    if (found >= 0 || this.previous === null) return found
    const before = this.probe(this.previous, hash, start, length)
    return before >= 0 ? before : found
  }

  /** In `index`, the number of the string at `bytes[start, start + length)`, or ~(its free slot). */
  private probe(index: Int32Array, hash: number, start: number, length: number): number {
    const mask = index.length - 1
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = index[slot] as number
      if (entry === 0) return ~slot
      if (this.equals(entry - 1, start, length)) return entry - 1
    }
  }

  private equals(id: number, start: number, length: number): boolean {
    const from = this.starts[id] as number
    if ((this.starts[id + 1] as number) - from !== length) return false
    const bytes = this.bytes
    for (let i = 0; i < length; i++) if (bytes[from + i] !== bytes[start + i]) return false
    return true
  }

  /** Starts moving to an index twice as large; the current one becomes {@link previous}. */
  private grow(): void {
    this.previous = this.index
    this.index = new Int32Array(this.index.length * 2)
    this.moved = 0
    this.movedUntil = this.count
    this.moveSome()
  }

  /** Moves a few strings of {@link previous} to the current index; drops it once all are moved. */
  private moveSome(): void {
    const mask = this.index.length - 1
    const until = Math.min(this.movedUntil, this.moved + MOVES_PER_ADDITION)
    for (let id = this.moved; id < until; id++) {
      let slot = hashBytes(this.bytes, this.starts[id] as number, this.starts[id + 1] as number) & mask
      while (this.index[slot] !== 0) slot = (slot + 1) & mask
      this.index[slot] = id + 1
    }
    this.moved = until
    if (until === this.movedUntil) this.previous = null
  }
}

/** Marks a string stored as UTF-16 code units: 0xFF never occurs in UTF-8. */
const WIDE = 0xff
/**
 * Strings moved to a grown index per addition. The move ends long before the new index is half
 * full: it starts a quarter full and has moved everything after an eighth of that many additions.
 */
const MOVES_PER_ADDITION = 8
/** Offsets are 32-bit. */
const MAX_BYTES = 2 ** 32 - 1

/** FNV-1a over `bytes[start, end)`. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193)
  return hash >>> 0
}

/** Whether `bytes[start, end)` holds U+FFFD (EF BF BD), which a lone surrogate is written as. */
function hasReplacementCharacter(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i + 2 < end; i++)
    if (bytes[i] === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd) return true
  return false
}

/** A copy of `array` with room for at least `length` items (half as much again, to grow seldom). */
export function grown<T extends Int32Array | Uint32Array | Float64Array>(array: T, length: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(
    Math.max(length, Math.ceil(array.length * 1.5)),
  )
  bigger.set(array)
  return bigger
}
