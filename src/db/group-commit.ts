/** Writes that arrive together: one call of the writer, one transaction, one commit for all. */
export interface GroupCommit<Item, Result> {
  /** Queues `item`; resolves with its result once the transaction holding it has committed. */
  write(item: Item): Promise<Result>
  /** Resolves once every item queued so far is written (or refused). */
  drained(): Promise<void>
}

export interface GroupCommitOptions {
  /** The most items one transaction holds; the rest wait for the next. */
  maxItems?: number
}

const MAX_ITEMS = 128

interface Queued<Item, Result> {
  item: Item
  resolve: (result: Result) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: the items queued during one turn of the event loop, and any queued while a commit
 * is under way, are written together by `writeAll` (which must write all or none, in one
 * transaction, and return one result per item in order). A commit costs about as much for one row
 * as for a hundred, and one writer at a time never queues on its own locks. If a group fails, each
 * of its items is written again alone, so one bad item never refuses the others.
 */
export function createGroupCommit<Item, Result>(
  writeAll: (items: Item[]) => Promise<Result[]>,
  options: GroupCommitOptions = {},
): GroupCommit<Item, Result> {
  const maxItems = options.maxItems ?? MAX_ITEMS
  let queue: Queued<Item, Result>[] = []
  let flushing: Promise<void> | null = null

  async function writeGroup(group: Queued<Item, Result>[]): Promise<void> {
    try {
      const results = await writeAll(group.map((queued) => queued.item))
      for (const [index, queued] of group.entries()) queued.resolve(results[index] as Result)
    } catch (error) {
      if (group.length === 1) {
        group[0]?.reject(error)
        return
      }
      for (const queued of group) await writeGroup([queued])
    }
  }

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const group = queue.slice(0, maxItems)
      queue = queue.slice(group.length)
      await writeGroup(group)
    }
    flushing = null
  }

  return {
    write(item) {
      return new Promise<Result>((resolve, reject) => {
        queue.push({ item, resolve, reject })
        // The first item of a group waits for the rest of this turn's posts; later ones join it.
        flushing ??= new Promise<void>((started) => setImmediate(started)).then(flush)
      })
    },
    async drained() {
      while (flushing !== null) await flushing
    },
  }
}
