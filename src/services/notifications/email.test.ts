import { describe, expect, it } from 'vitest'
import { isSafeEmail } from '../../resources/email-address.js'
import { submissionMail } from './email.js'

const form = {
  id: 'form_1',
  title: 'Contact',
  fields: [
    { name: 'from', label: 'From', type: 'email' as const, required: false, options: null, maxLength: null },
  ],
}
const submission = { id: 'submission_1', createdAt: '2024-01-05T10:00:00Z' }

describe('the email of a new submission', () => {
  it('keeps line breaks and control characters out of the subject', () => {
    const mail = submissionMail({
      form: { ...form, title: 'Evil\r\nBcc: thief@example.com\u0000' },
      submission: { ...submission, data: {} },
      recipients: ['owner@example.com'],
    })
    expect(mail?.subject).toBe('New submission: Evil Bcc: thief@example.com')
  })

  it('takes Reply-To only from a single plain address, the email-typed field first', () => {
    const replyTo = (data: Record<string, unknown>) =>
      submissionMail({ form, submission: { ...submission, data }, recipients: ['owner@example.com'] })
        ?.replyTo
    expect(replyTo({ from: 'ada@example.com', email: 'other@example.com' })).toBe('ada@example.com')
    expect(replyTo({ from: 'x,thief@example.com', email: 'other@example.com' })).toBe('other@example.com')
    expect(replyTo({ from: 'a@example.com\r\nBcc: t@example.com' })).toBeUndefined()
    expect(replyTo({ email: 'Ada <ada@example.com>' })).toBeUndefined()
    expect(replyTo({ email: ['first@example.com', 'second@example.com'] })).toBe('first@example.com')
  })

  it('sends to the valid recipients only, once each, and to no one when none is valid', () => {
    const to = (recipients: string[]) =>
      submissionMail({ form, submission: { ...submission, data: {} }, recipients })?.to
    expect(to(['owner@example.com', 'owner@example.com', 'bad,x@example.com', 'a@b.example'])).toEqual([
      'owner@example.com',
      'a@b.example',
    ])
    expect(to(['x@y\r\nBcc: z@example.com'])).toBeUndefined()
  })

  it('tells a plain address from anything that could carry another header or recipient', () => {
    expect(isSafeEmail('first.last+tag@sub.example.com')).toBe(true)
    for (const bad of ['a@b', 'a b@example.com', 'a@example.com\n', '"a"@example.com', 'a@-x.example.com'])
      expect(isSafeEmail(bad)).toBe(false)
  })
})
