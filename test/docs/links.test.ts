import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Markdown files under `dir` (relative to the root), `deep` to descend into folders. */
function markdownIn(dir: string, deep: boolean): string[] {
  const base = join(ROOT, dir)
  if (!existsSync(base)) return []
  const entries = readdirSync(base, { recursive: deep, encoding: 'utf8' })
  return entries
    .filter((name) => name.endsWith('.md') && statSync(join(base, name)).isFile())
    .map((name) => join(dir, name))
}

/** The documentation a reader follows: the README, the architecture, the guide, the benchmark and the clients. */
const DOCUMENTS = [
  'README.md',
  'ARCHITECTURE.md',
  ...markdownIn('docs', true),
  ...markdownIn('bench', false),
  ...readdirSync(join(ROOT, 'clients'))
    .map((client) => join('clients', client, 'README.md'))
    .filter((file) => existsSync(join(ROOT, file))),
].sort()

/** The lines of a Markdown file outside fenced code blocks, with their numbers. */
function proseLines(text: string): { line: string; number: number }[] {
  const lines: { line: string; number: number }[] = []
  let fence: string | undefined
  text.split('\n').forEach((line, index) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence) {
      if (opening?.startsWith(fence)) fence = undefined
    } else if (opening) {
      fence = opening
    } else {
      lines.push({ line, number: index + 1 })
    }
  })
  return lines
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces turned into hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

const anchorCache = new Map<string, Set<string>>()
/** Every anchor the headings of a Markdown file define, repeated headings numbered as GitHub does. */
function anchorsOf(file: string): Set<string> {
  const known = anchorCache.get(file)
  if (known) return known
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const { line } of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = slug(heading)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  anchorCache.set(file, anchors)
  return anchors
}

/** The targets of the inline links and images of a line, code spans left out. */
function linkTargets(line: string): string[] {
  const prose = line.replace(/(`+)[^`]*?\1/g, '')
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] ?? '')
}

/** What is wrong with each relative link of `file`: a missing file or a heading that is not there. */
function brokenLinks(file: string): string[] {
  const path = join(ROOT, file)
  const problems: string[] = []
  for (const { line, number } of proseLines(readFileSync(path, 'utf8'))) {
    for (const target of linkTargets(line)) {
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const [pathPart = '', anchor] = target.split('#', 2)
      const resolved = pathPart === '' ? path : resolve(dirname(path), decodeURIComponent(pathPart))
      if (!resolved.startsWith(ROOT)) {
        problems.push(`${file}:${number}: ${target} leads out of the repository`)
      } else if (!existsSync(resolved)) {
        problems.push(`${file}:${number}: ${target} names no file`)
      } else if (anchor !== undefined) {
        if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
          problems.push(`${file}:${number}: ${target} has an anchor but is not a Markdown file`)
        } else if (!anchorsOf(resolved).has(anchor)) {
          problems.push(`${file}:${number}: ${target} names no heading of ${relative(ROOT, resolved)}`)
        }
      }
    }
  }
  return problems
}

/** Lines that send the reader to documents outside the repository instead of stating the rule. */
function outsideCitations(file: string): string[] {
  // Upper case only: `spec/` is the repository's own folder of shared test cases.
  const citesContract = /\bSPEC\b|§/
  const citesElsewhere = /\.\.\/shared|\bissues?\s+#?\d+/i
  return readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .flatMap((line, index) =>
      citesContract.test(line) || citesElsewhere.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
    )
}

describe('the documentation', () => {
  it('includes the README, the guide in docs/ and the benchmark', () => {
    expect(DOCUMENTS).toContain('README.md')
    expect(DOCUMENTS).toContain(join('docs', 'README.md'))
    expect(DOCUMENTS).toContain(join('bench', 'README.md'))
  })

  it.each(DOCUMENTS)('links %s only to files and headings that exist', (file) => {
    expect(brokenLinks(file)).toEqual([])
  })

  it.each(DOCUMENTS)('states its rules in %s instead of citing documents outside the repository', (file) => {
    expect(outsideCitations(file)).toEqual([])
  })

  it('links every page of docs/ from the README or the guide index', () => {
    const linked = new Set<string>()
    for (const index of ['README.md', join('docs', 'README.md')]) {
      for (const { line } of proseLines(readFileSync(join(ROOT, index), 'utf8'))) {
        for (const target of linkTargets(line)) {
          const pathPart = target.split('#', 1)[0] ?? ''
          if (pathPart) linked.add(relative(ROOT, resolve(dirname(join(ROOT, index)), pathPart)))
        }
      }
    }
    const pages = markdownIn('docs', true).filter((page) => page !== join('docs', 'README.md'))
    expect(pages.filter((page) => !linked.has(page))).toEqual([])
  })

  it('finds a heading by the anchor GitHub gives it', () => {
    expect(slug('Import format')).toBe('import-format')
    expect(slug('Capacity plan: 10 million submissions, 20 instances')).toBe(
      'capacity-plan-10-million-submissions-20-instances',
    )
    expect(slug('`lectern import` and `--watch`')).toBe('lectern-import-and---watch')
    expect(slug('Why a key is [counted](x.md) early')).toBe('why-a-key-is-counted-early')
  })
})
