import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../errors.js'
import {
  DEFAULT_PAGE_SIZE,
  listMeta,
  listQuerySchema,
  MAX_PAGE_SIZE,
  parseListQuery,
  parseQueryString,
  type RawQuery,
} from './params.js'

/** The message of the 400 that parsing `query` throws. */
function refusal(query: RawQuery, filter?: 'active' | 'published'): string {
  try {
    parseListQuery(query, filter)
  } catch (error) {
    if (error instanceof ApiError) {
      expect(error.type).toBe('invalid_parameters')
      expect(error.status).toBe(400)
      return error.message
    }
    throw error
  }
  throw new Error(`the query ${JSON.stringify(query)} was accepted`)
}

const PAGE = `Parameter 'page' must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`
const PAGE_SIZE = "Page size (parameter 'pageSize') must be between 1 and 100"

describe('parseListQuery', () => {
  it('defaults to the first page of 20, unfiltered', () => {
    expect(parseListQuery({})).toEqual({ page: 1, pageSize: 20, filter: undefined })
    expect(DEFAULT_PAGE_SIZE).toBe(20)
    expect(MAX_PAGE_SIZE).toBe(100)
  })

  it('reads the page from 1 to the largest safe integer', () => {
    expect(parseListQuery({ page: '1' }).page).toBe(1)
    expect(parseListQuery({ page: '0002' }).page).toBe(2)
    expect(parseListQuery({ page: String(Number.MAX_SAFE_INTEGER) }).page).toBe(Number.MAX_SAFE_INTEGER)
  })

  it.each([
    '0',
    '-1',
    '+1',
    '1.0',
    '1e3',
    ' 1',
    '1 ',
    '0x10',
    '',
    'one',
    String(Number.MAX_SAFE_INTEGER + 1),
  ])('refuses the page %j', (page) => {
    expect(refusal({ page })).toBe(PAGE)
  })

  it('reads a page size from 1 to 100', () => {
    expect(parseListQuery({ pageSize: '1' }).pageSize).toBe(1)
    expect(parseListQuery({ pageSize: '100' }).pageSize).toBe(100)
  })

  it.each(['0', '101', '-5', '50.5', ''])('refuses the page size %j', (pageSize) => {
    expect(refusal({ pageSize })).toBe(PAGE_SIZE)
  })

  it('reads the filter as true or false, and only the endpoint’s own filter', () => {
    expect(parseListQuery({ active: 'true' }, 'active').filter).toBe(true)
    expect(parseListQuery({ active: 'false' }, 'active').filter).toBe(false)
    expect(parseListQuery({ published: 'true' }, 'published').filter).toBe(true)
    expect(parseListQuery({ active: 'true' }, 'published').filter).toBeUndefined()
    expect(parseListQuery({ active: 'true' }).filter).toBeUndefined()
  })

  it.each(['TRUE', 'False', '1', '0', 'yes', ''])('refuses the filter value %j', (active) => {
    expect(refusal({ active }, 'active')).toBe("Parameter 'active' must be 'true' or 'false'")
  })

  it('refuses a parameter given more than once, naming it', () => {
    expect(refusal({ page: ['1', '2'] })).toBe("Parameter 'page' must be given only once")
    expect(refusal({ pageSize: ['10', '10'] })).toBe("Parameter 'pageSize' must be given only once")
    expect(refusal({ published: ['true', 'true'] }, 'published')).toBe(
      "Parameter 'published' must be given only once",
    )
  })

  it('lists every problem in one message, in the order page, page size, filter', () => {
    expect(refusal({ page: '0', pageSize: '101', active: 'maybe' }, 'active')).toBe(
      `${PAGE}; ${PAGE_SIZE}; Parameter 'active' must be 'true' or 'false'`,
    )
  })

  it('ignores parameters it does not know', () => {
    expect(parseListQuery({ sort: 'name', page: '3' })).toEqual({ page: 3, pageSize: 20, filter: undefined })
    expect(parseListQuery({ undefined: 'x', active: 'x' })).toEqual({
      page: 1,
      pageSize: 20,
      filter: undefined,
    })
  })
})

describe('parseQueryString', () => {
  it('keeps a single value as a string and a repeated name as all its values, in order', () => {
    const query = parseQueryString('page=2&tag=a&tag=b&tag=c')
    expect({ ...query }).toEqual({ page: '2', tag: ['a', 'b', 'c'] })
  })

  it('decodes percent-encoding and plus signs', () => {
    expect({ ...parseQueryString('q=caf%C3%A9+au+lait&empty=') }).toEqual({ q: 'café au lait', empty: '' })
  })

  it('never throws on a broken encoding', () => {
    expect({ ...parseQueryString('q=%E0%A4%A&r=%') }).toEqual({ q: '\uFFFD%A', r: '%' })
  })

  it('reads any query as URLSearchParams does, encoded or not', () => {
    const alphabet = [
      'a',
      'B',
      '1',
      '&',
      '=',
      '+',
      '%',
      '2',
      '0',
      'F',
      ' ',
      '#',
      ';',
      'é',
      '\u00ff',
      '\u20ac',
    ]
    const query = fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }).map((chars) => chars.join(''))
    fc.assert(
      fc.property(query, (raw) => {
        const expected: Record<string, string | string[]> = {}
        for (const [name, value] of new URLSearchParams(raw)) {
          const seen = expected[name]
          expected[name] = seen === undefined ? value : [seen, value].flat()
        }
        expect(Object.entries(parseQueryString(raw))).toEqual(Object.entries(expected))
      }),
      { numRuns: 2000 },
    )
    expect(Object.entries(parseQueryString('&&a&=b&c=&d=1=2&&'))).toEqual([
      ['a', ''],
      ['', 'b'],
      ['c', ''],
      ['d', '1=2'],
    ])
  })

  it('gives an object without a prototype, so a parameter named __proto__ is only a parameter', () => {
    const query = parseQueryString('__proto__=x&constructor=y')
    expect(Object.getPrototypeOf(query)).toBeNull()
    expect(Object.entries(query)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ])
    expect(parseQueryString('').toString).toBeUndefined()
  })
})

describe('listMeta', () => {
  it('counts the pages, a partial last page included', () => {
    expect(listMeta(0, { page: 1, pageSize: 20 })).toEqual({ total: 0, page: 1, pageSize: 20, totalPages: 0 })
    expect(listMeta(20, { page: 1, pageSize: 20 })).toEqual({
      total: 20,
      page: 1,
      pageSize: 20,
      totalPages: 1,
    })
    expect(listMeta(21, { page: 2, pageSize: 20 })).toEqual({
      total: 21,
      page: 2,
      pageSize: 20,
      totalPages: 2,
    })
  })
})

describe('listQuerySchema', () => {
  it('describes page and pageSize with their bounds and defaults', () => {
    const schema = listQuerySchema()
    expect(Object.keys(schema.properties)).toEqual(['page', 'pageSize'])
    expect(schema.properties.page).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 1,
      description: 'page number, from 1',
    })
    expect(schema.properties.pageSize).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
      description: 'items per page',
    })
    expect(schema.required).toBeUndefined()
  })

  it('describes the endpoint’s boolean filter in its own words', () => {
    const active = listQuerySchema('active').properties as Record<string, unknown>
    expect(active.active).toMatchObject({
      type: 'boolean',
      description: 'true: only active; false: only inactive',
    })
    const published = listQuerySchema('published').properties as Record<string, unknown>
    expect(published.published).toMatchObject({
      type: 'boolean',
      description: 'true: only published pages; false: only unpublished',
    })
    expect(Object.keys(published)).toEqual(['page', 'pageSize', 'published'])
  })
})
