/** A response body remembered with the `ETag` it was served with. */
export interface RememberedResponse {
  etag: string
  /** The body as received: parsed afresh on each reuse, so a caller changing one result cannot change the next. */
  body: string
}

/**
 * The bodies of the most recent `GET`s, by URL, so that a repeated request can ask `If-None-Match`
 * and reuse the body on `304`. Bounded: beyond `capacity` the least recently used entry goes.
 * (A `Map` keeps insertion order, which is all an LRU needs; the package takes no dependencies.)
 */
export class ResponseMemory {
  private readonly entries = new Map<string, RememberedResponse>()

  constructor(readonly capacity: number) {}

  get(url: string): RememberedResponse | undefined {
    const entry = this.entries.get(url)
    if (entry !== undefined) {
      this.entries.delete(url)
      this.entries.set(url, entry)
    }
    return entry
  }

  set(url: string, entry: RememberedResponse): void {
    if (this.capacity <= 0) return
    this.entries.delete(url)
    this.entries.set(url, entry)
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string
      this.entries.delete(oldest)
    }
  }

  delete(url: string): void {
    this.entries.delete(url)
  }

  get size(): number {
    return this.entries.size
  }
}
