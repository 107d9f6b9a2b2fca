import { describe, expect, it } from 'vitest'
import { escapeHtml, html, raw, SafeHtml, SafeUrl, sameSitePath, url, withQuery } from './html.js'

describe('escapeHtml', () => {
  it('escapes the five characters that end text or a quoted attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;',
    )
  })

  it('escapes every occurrence, and an ampersand of an entity too', () => {
    expect(escapeHtml('<<&amp;>>')).toBe('&lt;&lt;&amp;amp;&gt;&gt;')
  })

  it('leaves other text as it is', () => {
    expect(escapeHtml('café / 100% = `ok`')).toBe('café / 100% = `ok`')
  })
})

describe('html', () => {
  it('escapes interpolated text and numbers, keeping the literal markup', () => {
    const name = '<script>alert("x")</script>'
    expect(html`<p title="${name}">${name} ${42}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; 42</p>',
    )
  })

  it('inserts nested html and raw() markup as it is', () => {
    const inner = html`<b>${'a<b'}</b>`
    expect(html`<p>${inner}${raw('<i>trusted</i>')}</p>`.value).toBe('<p><b>a&lt;b</b><i>trusted</i></p>')
  })

  it('renders nothing for null, undefined and false, but 0 and the empty string as text', () => {
    expect(html`[${null}|${undefined}|${false}|${0}|${''}]`.value).toBe('[|||0|]')
  })

  it('renders each item of a list, nested lists included, with nothing between them', () => {
    expect(html`<ul>${['<a>', html`<li>b</li>`, [1, null, ['&']]]}</ul>`.value).toBe(
      '<ul>&lt;a&gt;<li>b</li>1&amp;</ul>',
    )
  })

  it('escapes the ampersands of an address and nothing else of it', () => {
    const href = withQuery(url`/admin/forms`, { q: 'a', page: 2 })
    expect(html`<a href="${href}">x</a>`.value).toBe('<a href="/admin/forms?q=a&amp;page=2">x</a>')
  })

  it('builds markup without interpolations, and from an empty template', () => {
    expect(html`<hr>`.value).toBe('<hr>')
    expect(html``.value).toBe('')
    expect(String(html`<p>${'x'}</p>`)).toBe('<p>x</p>')
  })
})

describe('SafeHtml and SafeUrl', () => {
  it('cannot be made outside html, raw and url', () => {
    const MakeHtml = SafeHtml as unknown as new (value: string, token: symbol) => SafeHtml
    const MakeUrl = SafeUrl as unknown as new (value: string, token: symbol) => SafeUrl
    expect(() => new MakeHtml('<script>', Symbol('trusted'))).toThrow(
      new TypeError('SafeHtml is made by html`…` or raw()'),
    )
    expect(() => new MakeUrl('//evil.example', Symbol('trusted'))).toThrow(
      new TypeError('SafeUrl is made by url`…`'),
    )
  })

  it('turn into their value as strings', () => {
    expect(`${raw('<b>')}`).toBe('<b>')
    expect(`${url`/admin/${'a b'}`}`).toBe('/admin/a%20b')
  })
})

describe('url', () => {
  it('percent-encodes each interpolation so it stays one path segment', () => {
    expect(url`/admin/submissions/${'../users/x/disable?#'}/read`.value).toBe(
      '/admin/submissions/..%2Fusers%2Fx%2Fdisable%3F%23/read',
    )
    expect(url`/admin/forms/${42}/${true}`.value).toBe('/admin/forms/42/true')
  })

  it('keeps the literal after the last interpolation, and a literal alone', () => {
    expect(url`/admin/${'a'}/b/${'c'}?x=1`.value).toBe('/admin/a/b/c?x=1')
    expect(url`/admin`.value).toBe('/admin')
  })

  it.each([
    ['admin/forms', () => url`admin/forms`],
    ['//evil.example/', () => url`//evil.example/${'x'}`],
    ['', () => url`${'/admin'}`],
  ])('refuses a literal that does not start a same-site path (%j)', (first, build) => {
    expect(build).toThrow(new TypeError(`url\`…\` builds same-site paths only (got '${first}')`))
  })
})

describe('withQuery', () => {
  it('adds each parameter percent-encoded, in order, leaving out undefined ones', () => {
    const base = url`/admin/submissions`
    expect(withQuery(base, { q: 'a&b=c', skip: undefined, 'a b': 'x y', n: 0, f: false }).value).toBe(
      '/admin/submissions?q=a%26b%3Dc&a%20b=x%20y&n=0&f=false',
    )
  })

  it('gives the address itself when no parameter has a value', () => {
    const base = url`/admin/pages`
    expect(withQuery(base, {}).value).toBe('/admin/pages')
    expect(withQuery(base, { page: undefined }).value).toBe('/admin/pages')
  })

  it('adds a fragment, percent-encoded, after the query', () => {
    expect(withQuery(url`/admin/forms`, { page: 2 }, 'row 1#x').value).toBe('/admin/forms?page=2#row%201%23x')
    expect(withQuery(url`/admin/forms`, {}, 'top').value).toBe('/admin/forms#top')
    expect(withQuery(url`/admin/forms`, {}, '').value).toBe('/admin/forms#')
  })
})

describe('sameSitePath', () => {
  it.each([
    ['/admin', '/admin'],
    ['/admin/', '/admin/'],
    ['/admin/forms?page=2', '/admin/forms?page=2'],
    ['/admin/forms?page=2#top', '/admin/forms?page=2'],
    ['/admin/a b', '/admin/a%20b'],
    ['/admin/x/../forms', '/admin/forms'],
    ['/admin/forms//', '/admin/forms//'],
  ])('accepts %j as %j', (value, path) => {
    expect(sameSitePath(value, '/admin')?.value).toBe(path)
  })

  it.each([
    'admin/forms',
    '',
    '//evil.example/admin',
    '/\\evil.example/admin',
    '/admin\\..\\..\\x',
    'https://evil.example/admin',
    '/administrator',
    '/',
    '/other/admin',
    '/admin/../secret',
    '/admin/%2e%2e/secret',
    '/%61dmin',
  ])('refuses %j', (value) => {
    expect(sameSitePath(value, '/admin')).toBeUndefined()
  })
})
