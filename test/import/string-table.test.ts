import { describe, expect, it } from 'vitest'
import { StringTable } from '../../src/string-table.js'

describe('StringTable', () => {
  it('numbers distinct strings in the order they were first added', () => {
    const table = new StringTable()
    expect([table.intern('/a'), table.intern('/b'), table.intern('/a'), table.intern('')]).toEqual([
      0, 1, 0, 2,
    ])
    expect(table.size).toBe(3)
    expect([table.get(0), table.get(1), table.get(2)]).toEqual(['/a', '/b', ''])
  })

  it('finds only strings it holds, adding nothing', () => {
    const table = new StringTable()
    table.intern('/present')
    expect(table.find('/present')).toBe(0)
    expect(table.find('/absent')).toBe(-1)
    expect(table.find('/presen')).toBe(-1)
    expect(table.size).toBe(1)
  })

  it('keeps every string exact, lone surrogates and U+FFFD apart', () => {
    const strings = [
      '/\u00fcber',
      '/u\u0308ber',
      '/\ufffd',
      '/\ud800',
      '/\udc00',
      '/\u{1f600}',
      '/x\ud800y',
      '/x\ufffdy',
    ]
    const table = new StringTable()
    const ids = strings.map((text) => table.intern(text))
    expect(new Set(ids).size).toBe(strings.length)
    expect(ids.map((id) => table.get(id))).toEqual(strings)
    expect(strings.map((text) => table.find(text))).toEqual(ids)
  })

  it('holds a hundred thousand strings through its growth, each found again', () => {
    const table = new StringTable()
    for (let i = 0; i < 100_000; i++) expect(table.intern(`/path/${i}`)).toBe(i)
    for (let i = 0; i < 100_000; i += 997) expect(table.find(`/path/${i}`)).toBe(i)
    expect(table.get(99_999)).toBe('/path/99999')
    expect(table.size).toBe(100_000)
  })

  it('finds every string while its index grows, moved to the larger index or not yet', () => {
    const table = new StringTable()
    for (let i = 0; i < 5000; i++) {
      table.intern(`/p${i}`)
      for (const earlier of [0, i >> 1, i - 1, i])
        if (earlier >= 0) expect(table.find(`/p${earlier}`)).toBe(earlier)
      expect(table.intern(`/p${i >> 2}`)).toBe(i >> 2)
    }
    expect(table.size).toBe(5000)
  })

  it('tells whether a string starts with a character without making the string', () => {
    const table = new StringTable()
    const hash = table.intern('#12')
    const id = table.intern('page_1')
    const empty = table.intern('')
    expect([table.startsWith(hash, '#'), table.startsWith(id, '#'), table.startsWith(empty, '#')]).toEqual([
      true,
      false,
      false,
    ])
  })
})
