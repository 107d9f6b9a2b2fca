import { describe, expect, it } from 'vitest'
import { effectivePermissions, readKeyScope, refusal } from './key-scopes.js'

describe('key scopes', () => {
  it('reads no narrowing from two nulls, and a narrowing from JSON arrays', () => {
    expect(readKeyScope(null, null)).toEqual({ scopes: null, forms: null })
    const scope = readKeyScope('["pages:read"]', '["form_a"]')
    expect([...(scope.scopes ?? [])]).toEqual(['pages:read'])
    expect([...(scope.forms ?? [])]).toEqual(['form_a'])
  })

  it('narrows a key whose stored scopes are not a JSON array to nothing', () => {
    for (const text of ['not json', '{"pages:read":true}', '"pages:read"']) {
      const scope = readKeyScope(text, null)
      expect(effectivePermissions('global_admin', scope)).toEqual([])
      expect(refusal('global_admin', scope, 'pages:read')).toContain("'pages:read'")
    }
  })

  it('never grants a scope the role lacks', () => {
    const scope = readKeyScope('["submissions:read","pages:read"]', null)
    expect(effectivePermissions('editor', scope)).toEqual(['pages:read'])
    expect(refusal('editor', scope, 'submissions:read')).toBe(
      "This API key does not have the 'submissions:read' permission",
    )
    expect(refusal('editor', scope, 'pages:read')).toBeNull()
  })
})
