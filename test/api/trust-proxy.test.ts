import { describe, expect, it } from 'vitest'
import { loadConfig, trustProxySetting } from '../../src/config.js'

describe('TRUST_PROXY', () => {
  it('trusts no proxy unless told, so a client cannot choose its own address', () => {
    expect(trustProxySetting(undefined)).toBe(false)
    expect(trustProxySetting('false')).toBe(false)
  })

  it('accepts true, a hop count, or a list of addresses and networks', () => {
    expect(trustProxySetting('true')).toBe(true)
    const twoHops = trustProxySetting('2') as (address: string, hop: number) => boolean
    expect([0, 1, 2].map((hop) => twoHops('10.0.0.1', hop))).toEqual([true, true, false])
    expect(trustProxySetting('10.0.0.0/8,127.0.0.1')).toEqual(['10.0.0.0/8', '127.0.0.1'])
  })

  it('refuses anything else when the configuration is loaded', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/)
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1' }).TRUST_PROXY).toBe('10.0.0.1')
  })
})
