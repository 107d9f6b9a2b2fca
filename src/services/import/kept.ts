import type { ImportKind } from './kinds.js'

/**
 * The forms, pages or redirects of an import between its two passes, kept compactly: what the checks
 * across records need (ids, the order of each id's last record, a few fields such as paths), in a
 * map and parallel arrays, not the records themselves. A million tiny records then cost a hundred
 * or so bytes each rather than a kilobyte; the writing pass reads the records from the file again.
 *
 * Records are keyed by id, or by `#<order>` when they have none (`#` is outside the id alphabet, so
 * such a key never meets a real id).
 */
export class KeptRecords<Field extends string = never> {
  private readonly slots = new Map<string, number>()
  private readonly orders: number[] = []
  private readonly values: Record<string, string[]> = {}

  constructor(
    readonly kind: ImportKind,
    fields: readonly Field[] = [],
  ) {
    for (const field of fields) this.values[field] = []
  }

  /** The key of a record: its id, or `#<order>` when it has none. */
  static key(id: string | undefined, order: number): string {
    return id ?? `#${order}`
  }

  /** How many distinct records (ids) are kept. */
  get size(): number {
    return this.orders.length
  }

  /** Whether a record of the file has this id. */
  has(id: string): boolean {
    return this.slots.has(id)
  }

  /**
   * Keeps a record; a later record with the same key replaces the earlier one, whose order is
   * returned (to warn about it).
   */
  keep(key: string, order: number, fields: Readonly<Record<Field, string>>): number | undefined {
    const existing = this.slots.get(key)
    const slot = existing ?? this.orders.length
    const earlier = existing === undefined ? undefined : this.orders[slot]
    if (existing === undefined) this.slots.set(key, slot)
    this.orders[slot] = order
    for (const field in fields) (this.values[field] as string[])[slot] = fields[field]
    return earlier
  }

  /** Whether the record at `order` is the one kept for `key` (the last of the file with it). */
  isKept(key: string, order: number): boolean {
    const slot = this.slots.get(key)
    return slot !== undefined && this.orders[slot] === order
  }

  /** The kept records' slots in file order. */
  inFileOrder(): Uint32Array {
    const slots = Uint32Array.from(this.orders.keys())
    return slots.sort((a, b) => (this.orders[a] as number) - (this.orders[b] as number))
  }

  /** The kept records' slots ordered by a field, ties in file order: equal values end up together. */
  byField(field: Field): Uint32Array {
    const values = this.values[field] as string[]
    return this.inFileOrder().sort((a, b) => {
      const x = values[a] as string
      const y = values[b] as string
      return x < y ? -1 : x > y ? 1 : (this.orders[a] as number) - (this.orders[b] as number)
    })
  }

  /** The order of a slot's record. */
  orderAt(slot: number): number {
    return this.orders[slot] as number
  }

  /** A kept field of a slot's record. */
  fieldAt(slot: number, field: Field): string {
    return (this.values[field] as string[])[slot] as string
  }

  /**
   * Lets the kept fields go once the checks have read them: the writing pass needs only ids and
   * orders, and a million paths are tens of megabytes.
   */
  forgetFields(): void {
    for (const field in this.values) this.values[field] = []
  }

  /** The ids the file gives (records without one have none yet). */
  *givenIds(): Generator<string> {
    for (const key of this.slots.keys()) if (!key.startsWith('#')) yield key
  }
}
