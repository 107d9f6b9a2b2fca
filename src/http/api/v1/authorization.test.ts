import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../errors.js'
import { readBearerToken } from './authorization.js'

/** The `ApiError` that reading `header` throws. */
function refusal(header: string | undefined): ApiError {
  try {
    readBearerToken(header)
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error(`the header ${JSON.stringify(header)} was accepted`)
}

describe('readBearerToken', () => {
  it.each([
    ['Bearer lk_live_abc', 'lk_live_abc'],
    ['bearer lk_live_abc', 'lk_live_abc'],
    ['BEARER lk_live_abc', 'lk_live_abc'],
    ['Bearer \t  lk_live_abc', 'lk_live_abc'],
    ['Bearer\tlk_live_abc', 'lk_live_abc'],
    ['  Bearer lk_live_abc \t', 'lk_live_abc'],
    ['Bearer anything-else=', 'anything-else='],
  ])('reads the token of %j', (header, token) => {
    expect(readBearerToken(header)).toBe(token)
  })

  it.each([undefined, '', '   ', ' \t '])('answers missing_authorization_header to %j', (header) => {
    const error = refusal(header)
    expect(error.type).toBe('missing_authorization_header')
    expect(error.status).toBe(401)
    expect(error.message).toBe("Provide an API key in the Authorization header as 'Bearer <API_KEY>'")
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer' })
  })

  it.each([
    'lk_live_abc',
    'Bearer',
    'Bearerlk_live_abc',
    'Basic dXNlcjpwYXNz',
    'Bearers lk_live_abc',
    'Token lk_live_abc',
    'Bearer lk_live_abc extra',
    'Bearer lk_live_abc\tlk_live_def',
    'x Bearer lk_live_abc',
    'Bear3r lk_live_abc',
  ])('answers invalid_authorization_format to %j', (header) => {
    const error = refusal(header)
    expect(error.type).toBe('invalid_authorization_format')
    expect(error.status).toBe(401)
    expect(error.message).toBe("Authorization header must be in the format 'Bearer <API_KEY>'")
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer' })
  })
})
