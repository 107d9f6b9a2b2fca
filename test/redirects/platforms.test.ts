import { readFileSync, writeFileSync } from 'node:fs'
import { parse } from 'csv-parse/sync'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  exportRedirects,
  hasControlCharacter,
  type RedirectExportFormat,
} from '../../src/services/redirects/exports.js'
import { createRedirectMatcher, type RedirectAnswer } from '../../src/services/redirects/matcher.js'
import { caseFile, splitTarget } from './support.js'

// Netlify, Vercel and Cloudflare cannot run here. Their exports are pinned as golden files (a change
// shows up in review), and each is read back by a small parser of that platform's documented format
// that applies its rules to every case. UPDATE_GOLDEN=1 rewrites the golden files (named .golden so
// that no formatter touches them).

const pure = describe.skipIf(process.env.LECTERN_TEST_DATABASE === 'postgres')
const HOST = 'www.example.com'

const exported = (format: RedirectExportFormat) =>
  [...exportRedirects(format, createRedirectMatcher(caseFile.redirects).rules(), { host: HOST })].join('')

/** A platform's rule read back from its file: the exact path it matches, where it sends, how. */
interface PlatformRule {
  /** The source as the platform compares it: percent-decoded once, like the request path. */
  path: string
  location: string
  status: number
  keepsQuery: boolean
}

/** Applies parsed rules to a request the way these platforms do for exact, non-splat rules. */
function apply(rules: PlatformRule[], target: string): RedirectAnswer | null {
  const { path, query } = splitTarget(target)
  if (path === null) return null
  const rule = rules.find((r) => r.path === path)
  if (!rule) return null
  expect([301, 302]).toContain(rule.status)
  return {
    status: rule.status as 301 | 302,
    location: rule.keepsQuery && query !== '' ? `${rule.location}?${query}` : rule.location,
  }
}

/** Netlify `_redirects`: comment lines, then `from to status[!]` separated by whitespace. */
function parseNetlify(text: string): PlatformRule[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const fields = line.trim().split(/\s+/)
      expect(fields, line).toHaveLength(3)
      const [from = '', to = '', status = ''] = fields
      // A splat or placeholder would make the rule match more than one path.
      expect(from, line).not.toMatch(/[*:]/)
      expect(to, line).not.toMatch(/[*:]/)
      expect(status, line).toMatch(/^30[12]!$/)
      return {
        path: decodeURIComponent(from),
        location: to,
        status: Number.parseInt(status, 10),
        keepsQuery: true,
      }
    })
}

/** `vercel.json`: `redirects` of `{ source, destination, statusCode }`; sources are path-to-regexp patterns. */
function parseVercel(text: string): PlatformRule[] {
  const config = JSON.parse(text) as {
    redirects: { source: string; destination: string; statusCode: number }[]
  }
  return config.redirects.map(({ source, destination, statusCode, ...rest }) => {
    expect(rest).toEqual({})
    // path-to-regexp syntax (`:name`, groups, modifiers, wildcards) would widen the match.
    expect(source).not.toMatch(/[:()*+?{}\\]/)
    expect(destination).not.toMatch(/[:()*+?{}\\]/)
    return { path: decodeURIComponent(source), location: destination, status: statusCode, keepsQuery: true }
  })
}

/**
 * Cloudflare Bulk Redirects CSV, no header: source URL, target URL, status, preserve query string,
 * include subdomains, subpath matching, preserve path suffix.
 */
function parseCloudflare(text: string): PlatformRule[] {
  const records = parse(text) as string[][]
  return records.map((record) => {
    expect(record).toHaveLength(7)
    const [source = '', target = '', status = '', preserveQuery, subdomains, subpaths, suffix] = record
    expect(source.startsWith(`${HOST}/`), source).toBe(true)
    expect([subdomains, subpaths, suffix]).toEqual(['FALSE', 'FALSE', 'FALSE'])
    expect(new URL(target, `https://${HOST}`).host).toBe(HOST)
    return {
      path: decodeURIComponent(source.slice(HOST.length)),
      location: target,
      status: Number(status),
      keepsQuery: preserveQuery === 'TRUE',
    }
  })
}

const PLATFORMS = [
  { format: 'netlify', golden: '_redirects.golden', parse: parseNetlify },
  { format: 'vercel', golden: 'vercel.json.golden', parse: parseVercel },
  { format: 'cloudflare', golden: 'cloudflare-bulk-redirects.csv.golden', parse: parseCloudflare },
] as const

for (const platform of PLATFORMS) {
  pure(`the ${platform.format} export`, () => {
    const text = exported(platform.format)
    const goldenFile = new URL(`golden/${platform.golden}`, import.meta.url)

    it('matches its golden file', () => {
      if (process.env.UPDATE_GOLDEN) writeFileSync(goldenFile, text)
      expect(text).toBe(readFileSync(goldenFile, 'utf8'))
    })

    const rules = platform.parse(text)
    it.each(caseFile.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      expect(apply(rules, c.target)).toEqual(c.expect)
    })
  })
}

pure('every export, whatever the paths hold', () => {
  // Any text at all, quotes, braces, `$`, `%`, newlines and other control characters included.
  const hostilePath = fc
    .string({
      unit: fc.constantFrom(
        '"',
        "'",
        '`',
        '{',
        '}',
        '$',
        '%',
        ';',
        ' ',
        '\n',
        '\r',
        '\\',
        '#',
        'a',
        'ü',
        '/',
        '*',
        ':',
      ),
    })
    .map((text) => `/${text}`)

  it('writes one line per redirect in the line-based formats, so no path can add a directive', () => {
    fc.assert(
      fc.property(fc.uniqueArray(hostilePath, { maxLength: 8 }), (paths) => {
        const rules = [
          ...createRedirectMatcher(
            paths.map((fromPath) => ({ fromPath, toPath: `${fromPath}/x`, type: 'permanent' })),
          ).rules(),
        ]
        const exportable = rules.filter((rule) => !hasControlCharacter(rule.fromPath)).length
        const lines = (format: RedirectExportFormat) =>
          [...exportRedirects(format, rules, { host: HOST })]
            .join('')
            .split('\n')
            .filter((line) => line !== '').length
        // Header lines: nginx and netlify 1; apache 2; caddy 1 + map open/default/close + 4 redir lines.
        expect(lines('nginx')).toBe(1 + exportable)
        expect(lines('netlify')).toBe(1 + exportable)
        expect(lines('apache')).toBe(2 + exportable)
        const special = rules.filter(
          (rule) => !hasControlCharacter(rule.fromPath) && rule.fromPath.includes('{$'),
        ).length
        expect(lines('caddy')).toBe(1 + 3 + 4 + (exportable - special) + 4 * special)
        expect(parse([...exportRedirects('cloudflare', rules, { host: HOST })].join(''))).toHaveLength(
          exportable,
        )
        expect(JSON.parse([...exportRedirects('vercel', rules)].join('')).redirects).toHaveLength(exportable)
      }),
      { numRuns: 300 },
    )
  })
})
