/**
 * What Lectern will put in a mail header as an address (a form's `notifyEmails`, a submission's
 * Reply-To): one plain `local@domain.tld`, with nothing a header could be broken with: no spaces,
 * quotes, commas, brackets or line breaks. A form refuses to save an address outside it, rather
 * than have its mail quietly go to fewer people.
 */
const PLAIN_EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/

export function isSafeEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && PLAIN_EMAIL.test(value)
}
