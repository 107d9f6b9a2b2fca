import { describe, expect, it } from 'vitest'
import { readForm, readFormInput, readIntakeSettings } from './form.js'
import { readPage, readPageInput } from './page.js'
import { checkRedirectInput, readRedirect } from './redirect.js'
import { readNotes, readSubmission } from './submission.js'

describe('one reader per resource, each face in its own words', () => {
  it('refuses a page path without a leading slash from an import and from the editor alike', () => {
    expect(readPage({ title: 'About', slug: 'about', path: 'about' }).problems).toEqual([
      { field: 'path', message: "must start with '/'" },
    ])
    const { fields } = readPageInput({
      title: ' About ',
      slug: 'about',
      path: ' about ',
      pageType: '',
      isPublished: false,
    })
    expect(fields).toEqual({ path: "Path must start with '/'" })
  })

  it('gives the editor the same page an import would store, trimmed and with its default type', () => {
    const { value, fields } = readPageInput({
      title: ' About ',
      slug: ' about ',
      path: ' /about ',
      pageType: ' ',
      isPublished: true,
    })
    expect(fields).toEqual({})
    expect(value).toEqual({
      title: 'About',
      slug: 'about',
      path: '/about',
      pageType: 'page',
      isPublished: true,
    })
    expect(
      readPage({ title: 'About', slug: 'about', path: '/about', isPublished: true }).draft,
    ).toMatchObject(value)
  })

  it('stores a redirect path percent-decoded whether it comes from a form, a CSV row or an import', () => {
    expect(checkRedirectInput({ fromPath: ' /%C3%BCber ', toPath: '/b' }).value).toEqual({
      fromPath: '/über',
      toPath: '/b',
      type: 'permanent',
      isActive: true,
    })
    expect(readRedirect({ fromPath: '/%C3%BCber', toPath: '/b' }).draft.fromPath).toBe('/über')
  })

  it('refuses an unknown redirect type, quoting it as typed in a form and as JSON in an import', () => {
    expect(checkRedirectInput({ fromPath: '/a', toPath: '/b', type: 'forever' }).problems).toEqual([
      "Type must be 'permanent' or 'temporary', not 'forever'",
    ])
    expect(readRedirect({ fromPath: '/a', toPath: '/b', type: 'forever' }).problems).toEqual([
      { field: 'type', message: "must be 'permanent' or 'temporary' (got \"forever\")" },
    ])
  })

  it('says a blank redirect path is required, beside its field', () => {
    expect(checkRedirectInput({ fromPath: '  ', toPath: '/b' }).fields).toEqual({
      fromPath: 'From path is required',
    })
  })

  it('refuses from a form the text an import refuses: a lone surrogate cannot be stored', () => {
    const { fields } = checkRedirectInput({ fromPath: '/a\uD800', toPath: '/b' })
    expect(fields.fromPath).toBe('From path must not contain lone UTF-16 surrogates (not valid Unicode text)')
    expect(readRedirect({ fromPath: '/a\uD800', toPath: '/b' }).problems).toEqual([
      { field: 'fromPath', message: 'must not contain lone UTF-16 surrogates (not valid Unicode text)' },
    ])
  })

  it('refuses a form without a title in the editor and the importer alike, and checks intake settings', () => {
    expect(readFormInput({ title: '  ', description: '', isActive: true }).fields).toEqual({
      title: 'Title must not be empty',
    })
    expect(readForm({ title: 'Contact', intake: { enabled: 'yes' } }).problems).toEqual([
      { field: 'intake', message: 'enabled: expected boolean (got "yes")' },
    ])
  })

  it('checks the rules of every intake setting of the right type, beside the settings of the wrong type', () => {
    expect(
      readIntakeSettings({ enabled: 'yes', allowedOrigins: ['not an origin'], retentionDays: 0 }).problems,
    ).toEqual([
      'enabled: expected boolean (got "yes")',
      'allowedOrigins[0] must be an origin such as https://www.example.com, with no path (got "not an origin")',
      'retentionDays must be an integer from 1 to 36500, or null (got 0)',
    ])
    expect(
      readIntakeSettings({
        storeIpAddress: 1,
        redirectUrl: 'no place',
        notifyEmails: ['not an address'],
        fields: [{ name: '_secret', type: 'text' }],
        colour: 'red',
      }).problems,
    ).toEqual([
      'colour: unexpected property (got "red")',
      'storeIpAddress: expected boolean (got 1)',
      'redirectUrl must be an absolute http(s) URL or a path starting with / (got "no place")',
      'notifyEmails[0] must be one plain email address such as owner@example.com (got "not an address")',
      'fields[0].name must not begin with _ (such names are control fields, never stored)',
    ])
  })

  it('names an intake setting of the wrong type once, for its type alone', () => {
    expect(
      readIntakeSettings({
        allowedOrigins: [1, 'not an origin'],
        notifyEmails: 'owner',
        retentionDays: 1.5,
        fields: { name: 'email' },
      }).problems,
    ).toEqual([
      'allowedOrigins.0: expected string (got 1)',
      'retentionDays: expected union value (got 1.5)',
      'notifyEmails: expected array (got "owner")',
      'fields: expected array (got {"name":"email"})',
    ])
  })

  it('gives an import every problem of an intake in one run', () => {
    expect(readForm({ title: 'Contact', intake: { enabled: 'yes', retentionDays: 0 } }).problems).toEqual([
      {
        field: 'intake',
        message:
          'enabled: expected boolean (got "yes"); retentionDays must be an integer from 1 to 36500, or null (got 0)',
      },
    ])
  })

  it('keeps notes to the limit an import applies, and reads blank notes as none', () => {
    expect(readNotes('   ')).toEqual({ notes: null, problem: null })
    expect(readNotes(undefined)).toEqual({ notes: undefined, problem: null })
    expect(readNotes('x'.repeat(10_001)).problem).toBe('Notes must be at most 10000 characters (got 10001)')
    expect(
      readSubmission({ formId: 'form_a', data: {}, notes: 'x'.repeat(10_001) }).problems.map((p) => p.field),
    ).toEqual(['notes'])
  })

  it("refuses a submission's data that is not an object", () => {
    expect(readSubmission({ formId: 'form_a', data: [1] }).problems).toEqual([
      { field: 'data', message: 'must be a JSON object (got an array)' },
    ])
  })
})
