import { grown, StringTable } from '../../string-table.js'
import type { ImportKind } from './kinds.js'

/** The value number of a field that could not be read (the value table numbers from 0). */
const UNREAD = -1

/**
 * The forms, pages or redirects of an import between its two passes, kept compactly: what the checks
 * across records need (ids, the order of each id's last record, a few fields such as paths), not
 * the records themselves. Keys and field values are numbered by {@link StringTable}s (their bytes
 * packed outside the JavaScript heap) and everything else sits in typed arrays, so a million tiny
 * records cost a few dozen bytes each and give the garbage collector nothing to trace; the writing
 * pass reads the records from the file again.
 *
 * A record's slot is the number of its key: its id, or `#<order>` when it has none (`#` is outside
 * the id alphabet, so such a key never meets a real id). A kept field that could not be read
 * (the record has a problem there) has no value: the checks of that field leave the record out.
 */
export class RecordIndex<Field extends string = never> {
  private readonly keys = new StringTable()
  private orders = new Float64Array(1 << 10)
  private fieldValues: Record<string, Int32Array> = {}
  private valueTable: StringTable

  constructor(
    readonly kind: ImportKind,
    private readonly fields: readonly Field[] = [],
  ) {
    this.valueTable = new StringTable()
    for (const field of fields) this.fieldValues[field] = new Int32Array(1 << 10)
  }

  /**
   * The table that numbers the kept fields' strings; others may number more strings in it (the
   * redirect checks number every stored path there too, so that one number means one path).
   */
  get values(): StringTable {
    return this.valueTable
  }

  /** The key of a record: its id, or `#<order>` when it has none. */
  static key(id: string | undefined, order: number): string {
    return id ?? `#${order}`
  }

  /** How many distinct records (keys) are kept. */
  get size(): number {
    return this.keys.size
  }

  /** Whether a record of the file has this id. */
  has(id: string): boolean {
    return this.keys.find(id) !== -1
  }

  /**
   * Keeps a record; a later record with the same key replaces the earlier one, whose order is
   * returned (to warn about it). A field given as `undefined` could not be read ({@link isRead}).
   */
  keep(key: string, order: number, fields: Readonly<Record<Field, string | undefined>>): number | undefined {
    const known = this.keys.size
    const slot = this.keys.intern(key)
    if (slot >= this.orders.length) {
      this.orders = grown(this.orders, slot + 1)
      for (const field of this.fields)
        this.fieldValues[field] = grown(this.fieldValues[field] as Int32Array, slot + 1)
    }
    const earlier = slot < known ? this.orders[slot] : undefined
    this.orders[slot] = order
    for (const field of this.fields) {
      const value = fields[field]
      ;(this.fieldValues[field] as Int32Array)[slot] =
        value === undefined ? UNREAD : this.values.intern(value)
    }
    return earlier
  }

  /** Whether the record at `order` is the one kept for `key` (the last of the file with it). */
  isKept(key: string, order: number): boolean {
    const slot = this.keys.find(key)
    return slot !== -1 && this.orders[slot] === order
  }

  /** The kept records' slots in file order. */
  inFileOrder(): Uint32Array {
    const orders = this.orders
    const slots = new Uint32Array(this.size)
    for (let slot = 0; slot < slots.length; slot++) slots[slot] = slot
    // Slots are mostly in file order already (only a repeated id moves a slot's record later).
    for (let i = 1; i < slots.length; i++) {
      if ((orders[slots[i - 1] as number] as number) > (orders[slots[i] as number] as number))
        return slots.sort((a, b) => (orders[a] as number) - (orders[b] as number))
    }
    return slots
  }

  /** The order of the last kept record in the file, or 0 when none is kept. */
  lastOrder(): number {
    let last = 0
    for (let slot = 0; slot < this.size; slot++) last = Math.max(last, this.orders[slot] as number)
    return last
  }

  /** The order of a slot's record. */
  orderAt(slot: number): number {
    return this.orders[slot] as number
  }

  /** Whether a kept field of a slot's record could be read; only then has it a value. */
  isRead(slot: number, field: Field): boolean {
    return (this.fieldValues[field] as Int32Array)[slot] !== UNREAD
  }

  /** The number (in {@link values}) of a kept field of a slot's record. */
  valueAt(slot: number, field: Field): number {
    return (this.fieldValues[field] as Int32Array)[slot] as number
  }

  /** A kept field of a slot's record. */
  fieldAt(slot: number, field: Field): string {
    return this.values.get(this.valueAt(slot, field))
  }

  /** Lets the kept fields go once the checks have read them: the writing pass needs only keys and orders. */
  forgetFields(): void {
    for (const field of this.fields) this.fieldValues[field] = new Int32Array(0)
    this.valueTable = new StringTable()
  }

  /** The ids the file gives (records without one have none yet). */
  *givenIds(): Generator<string> {
    for (let slot = 0; slot < this.keys.size; slot++)
      if (!this.keys.startsWith(slot, '#')) yield this.keys.get(slot)
  }
}
