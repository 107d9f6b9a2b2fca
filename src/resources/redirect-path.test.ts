import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  MAX_REDIRECT_PATH_LENGTH,
  normaliseRedirectPath,
  redirectPathForEntry,
  redirectPathProblem,
} from './redirect-path.js'

describe('redirectPathProblem', () => {
  it.each([
    '/',
    '/old',
    '/blog/2024/hello-world',
    '/a b',
    '/caf%C3%A9',
    '/café',
    `/${'x'.repeat(MAX_REDIRECT_PATH_LENGTH - 1)}`,
  ])('accepts %j', (path) => {
    expect(redirectPathProblem(path)).toBeNull()
  })

  it.each([
    ['', "must start with '/'"],
    ['old', "must start with '/'"],
    ['https://evil.com', "must start with '/'"],
    ['//evil.com', "must not start with '//'"],
    ['/a?b=1', "must not contain a query string ('?')"],
    ['/a#x', "must not contain a fragment ('#')"],
    ['/a\\b', 'must not contain a backslash'],
    ['/\\evil.com', 'must not contain a backslash'],
    ['/a\u0000b', 'must not contain control characters (found U+0000)'],
    ['/a\nLocation: x', 'must not contain control characters (found U+000A)'],
    ['/a\u001f', 'must not contain control characters (found U+001F)'],
    ['/a\u007f', 'must not contain control characters (found U+007F)'],
    [`/${'x'.repeat(MAX_REDIRECT_PATH_LENGTH)}`, 'must be at most 2048 characters long (it has 2049)'],
    ['/..//evil.com', 'must not contain a dot segment'],
    ['/.//evil.com', 'must not contain a dot segment'],
    ['/a/../b', 'must not contain a dot segment'],
    ['/a/./b', 'must not contain a dot segment'],
    ['/a/..', 'must not contain a dot segment'],
    ['/a/.', 'must not contain a dot segment'],
    ['/%2F%2Fevil.com', "must not contain an encoded slash (found '%2F')"],
    ['/a%2fb', "must not contain an encoded slash (found '%2f')"],
    ['/a%5Cb', "must not contain an encoded backslash (found '%5C')"],
    ['/%09/evil.com', "must not contain an encoded control character (found '%09')"],
    ['/a%00', "must not contain an encoded control character (found '%00')"],
    ['/a%1f', "must not contain an encoded control character (found '%1f')"],
    ['/a%7F', "must not contain an encoded control character (found '%7F')"],
    ['/%2e%2e/evil.com', "decodes to '/../evil.com', which must not contain a dot segment"],
    ['/a/%2E', "decodes to '/a/.', which must not contain a dot segment"],
    ['/a%3Fb=1', "decodes to '/a?b=1', which must not contain a query string ('?')"],
    ['/a%23top', "decodes to '/a#top', which must not contain a fragment ('#')"],
    ['/%252F%252Fevil.com', "decodes to '/%2F%2Fevil.com', which must not contain an encoded slash"],
    ['/50%-off', 'has an invalid percent-encoding'],
    ['/%zz', 'has an invalid percent-encoding'],
    ['/old%', 'has an invalid percent-encoding'],
    ['/%C3%28ber', 'has an invalid percent-encoding'],
    ['/%BCber', 'has an invalid percent-encoding'],
  ])('refuses %j because it %s', (path, reason) => {
    expect(redirectPathProblem(path)).toContain(reason)
  })

  it('accepts names that merely start with dots', () => {
    for (const path of ['/...', '/.well-known/x', '/a/..b', '/a.', '/a/.b/'])
      expect(redirectPathProblem(path)).toBeNull()
  })
})

describe('normaliseRedirectPath', () => {
  it.each([
    ['/%C3%BCber', '/über'],
    ['/%c3%bcber', '/über'],
    ['/über', '/über'],
    ['/caf%C3%A9/men%C3%BC', '/café/menü'],
    ['/a%20b', '/a b'],
    ['/%F0%9F%98%80', '/😀'],
    ['/100%25-pure', '/100%-pure'],
    ['/%6Fld', '/old'],
    ['/a%2Bb%3Bc', '/a+b;c'],
    ['/plain', '/plain'],
  ])('stores %j percent-decoded as %j', (given, stored) => {
    expect(normaliseRedirectPath(given)).toEqual({ path: stored, problem: null })
  })

  it('gives no path with a problem', () => {
    expect(normaliseRedirectPath('/%zz')).toEqual({ path: null, problem: expect.stringContaining('%25') })
  })

  it('reads a stored path back as itself once written for entry, for any text', () => {
    for (const stored of ['/über', '/100%-pure', '/50%25-off', '/a b', '/%'])
      expect(normaliseRedirectPath(redirectPathForEntry(stored)).path).toBe(stored)
    fc.assert(
      fc.property(fc.string(), (text) => {
        const stored = normaliseRedirectPath(`/${redirectPathForEntry(text)}`)
        if (stored.path !== null) expect(stored.path).toBe(`/${text}`)
      }),
    )
  })
})
