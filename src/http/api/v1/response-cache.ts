import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'

interface Entry {
  version: number
  /**
   * Kept as bytes: a serialized string is often a rope of thousands of pieces that takes many times
   * its length in heap, while a buffer is exactly its size, off the heap, and goes out unconverted.
   */
  body: Buffer
}

/**
 * Serialized list responses, reused while the content version they were built at is current. The
 * version is read in the same statement as the request's key check, so an entry is never served
 * after a change, on any instance. Bounded by total size (least recently used entries go first).
 */
export class ResponseCache {
  private readonly entries: LRUCache<string, Entry>

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (entry) => Math.max(1, entry.body.length),
      // A response larger than an eighth of the cache would evict too much to be worth keeping.
      maxEntrySize: maxBytes / 8,
    })
  }

  get(key: string, version: number): Buffer | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.version !== version) {
      this.entries.delete(key)
      return undefined
    }
    return entry.body
  }

  set(key: string, version: number, body: Buffer): void {
    this.entries.set(key, { version, body })
  }
}

/**
 * The entity tag of a list response: the content version plus the request's cache key. Equal tags
 * mean equal bodies, on every instance, so a client's `If-None-Match` can be answered without
 * touching the data.
 */
export function entityTag(cacheKey: string, version: number): string {
  return `"${version}-${createHash('sha1').update(cacheKey).digest('base64url').slice(0, 16)}"`
}

/** True when an `If-None-Match` header lists `tag` (or `*`); weak and strong forms compare equal. */
export function matchesEntityTag(header: string | undefined, tag: string): boolean {
  if (!header) return false
  return header.split(',').some((candidate) => {
    const value = candidate.trim().replace(/^W\//, '')
    return value === tag || value === '*'
  })
}
