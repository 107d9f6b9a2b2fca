import { describe, expect, it } from 'vitest'
import { settledWithin } from './deadline.js'

const resolvesAfter = <T>(ms: number, value: T) =>
  new Promise<T>((resolve) => setTimeout(() => resolve(value), ms))

describe('settledWithin', () => {
  it('gives what the work settles to in time', async () => {
    expect(await settledWithin(resolvesAfter(5, 'done'), 1_000)).toBe('done')
  })

  it('gives undefined once the time has passed, the work still going', async () => {
    expect(await settledWithin(resolvesAfter(1_000, 'late'), 10)).toBeUndefined()
  })

  it('gives undefined as soon as the signal aborts', async () => {
    const controller = new AbortController()
    const waiting = settledWithin(resolvesAfter(1_000, 'late'), 5_000, controller.signal)
    controller.abort()
    expect(await waiting).toBeUndefined()
  })

  it('rejects with the work when it fails in time', async () => {
    await expect(settledWithin(Promise.reject(new Error('broken')), 1_000)).rejects.toThrow('broken')
  })
})
