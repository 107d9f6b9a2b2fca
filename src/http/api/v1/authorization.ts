import { ApiError } from '../../../errors.js'

const BEARER = /^([A-Za-z]+)[ \t]+([^ \t]+)$/

/** Extracts the token of `Authorization: Bearer <token>`, or says what is wrong with the header. */
export function readBearerToken(header: string | undefined): string {
  const value = header?.trim() ?? ''
  if (value === '') {
    throw new ApiError(
      'missing_authorization_header',
      "Provide an API key in the Authorization header as 'Bearer <API_KEY>'",
      { 'WWW-Authenticate': 'Bearer' },
    )
  }
  // Stryker disable next-line ArrayDeclaration: without a match there is no scheme, and the header is refused below
  const [, scheme, token] = BEARER.exec(value) ?? []
  // Stryker disable next-line ConditionalExpression: a match always has a token; the test only satisfies the type checker
  if (scheme?.toLowerCase() !== 'bearer' || token === undefined) {
    throw new ApiError(
      'invalid_authorization_format',
      "Authorization header must be in the format 'Bearer <API_KEY>'",
      {
        'WWW-Authenticate': 'Bearer',
      },
    )
  }
  return token
}
