import { hash } from 'node:crypto'
import { LRUCache } from 'lru-cache'

interface Entry {
  version: number
  /**
   * Kept as bytes: a serialized string is often a rope of thousands of pieces that takes many times
   * its length in heap, while a buffer is exactly its size, off the heap, and goes out unconverted.
   */
  body: Buffer
  /** The response's `ETag`, computed once for the entry rather than hashed again on every hit. */
  tag: string
}

/**
 * How many recently missed keys are remembered, to tell a key asked for again from a one-off. Small
 * on purpose: under a flood of random pages a one-off is rarely among the last 128 misses (about 1%
 * for a 10,000-page list), while a page that is really asked for again is, even then.
 */
const RECENT_MISSES = 128

/**
 * Serialized list responses, reused while the content version they were built at is current. The
 * version is read in the same statement as the request's key check, so an entry is never served
 * after a change, on any instance. Bounded by total size (least recently used entries go first).
 *
 * A response is kept only when its key is asked for a second time while still among the last
 * `RECENT_MISSES` misses: most keys of a deep list are asked for once (random pages), and keeping
 * each of them would turn every such request into a buffer that outlives the young generation and
 * waits, off the heap, for a full collection after being evicted. A page asked for repeatedly is
 * kept from its second request on.
 */
export class ResponseCache {
  private readonly entries: LRUCache<string, Entry>
  private readonly recentMisses = new LRUCache<string, true>({ max: RECENT_MISSES })
  /** The body being built for each key, and the version it is built at. */
  private readonly building = new Map<string, { version: number; body: Promise<string | Buffer> }>()

  // 8 MiB holds about 150 full pages of 100 submissions, or thousands of smaller pages: more than a
  // list's hot pages, and little enough that the cache does not dominate the server's memory.
  constructor(maxBytes = 8 * 1024 * 1024) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (entry) => Math.max(1, entry.body.length),
      // A response larger than an eighth of the cache would evict too much to be worth keeping.
      maxEntrySize: maxBytes / 8,
    })
  }

  /** The response kept for `key` at `version`: its bytes and its entity tag. */
  get(key: string, version: number): Readonly<Entry> | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.version !== version) {
      this.entries.delete(key)
      // A kept key has been asked for again before: the body rebuilt at the new version is kept at once.
      this.recentMisses.set(key, true)
      return undefined
    }
    return entry
  }

  /**
   * The body of `key` at `version` for a request that missed it: the one being built for the same key
   * and version, else a new one from `build`, offered to the cache. After a write, the requests for a hot
   * page that arrive together all miss at once; without this each would build the same page again.
   * Joining a build of the same version is as fresh as reading the entry it will leave: either was
   * built after its own request read that version.
   */
  async body(
    key: string,
    version: number,
    tag: string,
    build: () => Promise<string>,
  ): Promise<string | Buffer> {
    const running = this.building.get(key)
    if (running !== undefined && running.version === version) return running.body
    const body = build().then((text) => this.offer(key, version, text, tag))
    const entry = { version, body }
    this.building.set(key, entry)
    const done = () => {
      if (this.building.get(key) === entry) this.building.delete(key)
    }
    body.then(done, done)
    return body
  }

  /**
   * Offers the body just built for a miss of `key` at `version`, and returns what to send: the
   * stored bytes when the key was missed recently too, otherwise `body` itself, unconverted, so a
   * one-off response is written to the socket and dropped without ever becoming a buffer.
   */
  offer(key: string, version: number, body: string, tag: string): string | Buffer {
    if (this.recentMisses.get(key) === undefined) {
      this.recentMisses.set(key, true)
      return body
    }
    this.recentMisses.delete(key)
    const bytes = Buffer.from(body)
    this.entries.set(key, { version, body: bytes, tag })
    return bytes
  }
}

/**
 * The entity tag of a list response: the content version plus the request's cache key. Equal tags
 * mean equal bodies, on every instance, so a client's `If-None-Match` can be answered without
 * touching the data.
 */
export function entityTag(cacheKey: string, version: number): string {
  return `"${version}-${hash('sha1', cacheKey, 'base64url').slice(0, 16)}"`
}

/** True when an `If-None-Match` header lists `tag` (or `*`); weak and strong forms compare equal. */
export function matchesEntityTag(header: string | undefined, tag: string): boolean {
  if (!header) return false
  return header.split(',').some((candidate) => {
    const value = candidate.trim().replace(/^W\//, '')
    return value === tag || value === '*'
  })
}
