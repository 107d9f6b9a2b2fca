import { describe, expect, it } from 'vitest'
import { createGroupCommit } from './group-commit.js'

/** A writer that records each group it is given and answers each item doubled. */
function recordingWriter(options: { failOn?: number; pause?: () => Promise<void> } = {}) {
  const groups: number[][] = []
  const writeAll = async (items: number[]) => {
    groups.push([...items])
    await options.pause?.()
    if (items.includes(options.failOn ?? Number.NaN)) throw new Error(`refused ${options.failOn}`)
    return items.map((item) => item * 2)
  }
  return { groups, writeAll }
}

describe('group commit', () => {
  it('writes the items of one turn of the event loop in one group, answering each its own result', async () => {
    const { groups, writeAll } = recordingWriter()
    const commit = createGroupCommit(writeAll)
    const results = await Promise.all([1, 2, 3, 4].map((item) => commit.write(item)))
    expect(results).toEqual([2, 4, 6, 8])
    expect(groups).toEqual([[1, 2, 3, 4]])
  })

  it('gathers the items that arrive while a group is being written into the next group', async () => {
    let release: () => void = () => {}
    const { groups, writeAll } = recordingWriter({
      pause: () =>
        groups.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve(),
    })
    const commit = createGroupCommit(writeAll)
    const first = commit.write(1)
    await new Promise((resolve) => setImmediate(resolve))
    const later = [2, 3, 4].map((item) => commit.write(item))
    await new Promise((resolve) => setImmediate(resolve))
    expect(groups).toEqual([[1]])
    release()
    expect(await Promise.all([first, ...later])).toEqual([2, 4, 6, 8])
    expect(groups).toEqual([[1], [2, 3, 4]])
  })

  it('never puts more than maxItems in one group', async () => {
    const { groups, writeAll } = recordingWriter()
    const commit = createGroupCommit(writeAll, { maxItems: 3 })
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((item) => commit.write(item)))
    expect(groups).toEqual([[1, 2, 3], [4, 5, 6], [7]])
  })

  it('writes each item of a failed group alone, so only the bad one is refused', async () => {
    const { groups, writeAll } = recordingWriter({ failOn: 2 })
    const commit = createGroupCommit(writeAll)
    const settled = await Promise.allSettled([1, 2, 3].map((item) => commit.write(item)))
    expect(settled).toEqual([
      { status: 'fulfilled', value: 2 },
      { status: 'rejected', reason: new Error('refused 2') },
      { status: 'fulfilled', value: 6 },
    ])
    expect(groups).toEqual([[1, 2, 3], [1], [2], [3]])
  })

  it('is drained once every queued item has been written', async () => {
    const { groups, writeAll } = recordingWriter()
    const commit = createGroupCommit(writeAll)
    void commit.write(1)
    void commit.write(2)
    await commit.drained()
    expect(groups).toEqual([[1, 2]])
    await commit.drained()
  })
})
