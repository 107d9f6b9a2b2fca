import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli/main.js'
import { TEST_DIALECT } from '../harness.js'
import { runCli } from './run-cli.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The headings of the README and of the guide under docs/, which a "README, <section>" may name. */
const README_HEADINGS = new Set(
  [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ]
    .flatMap((file) => readFileSync(join(ROOT, file), 'utf8').split('\n'))
    .filter((line) => line.startsWith('#'))
    .map((line) => line.replace(/^#+\s*/, '').trim()),
)

/** Citations of documents the repository does not hold: a numbered section, an issue number. */
const FOREIGN_REFERENCE = /\bSPEC\b|§|\b[Ii]ssues? #?\d+/

/** What in `text` points somewhere and cannot be followed inside the repository. */
function unresolved(text: string): string[] {
  const found: string[] = []
  for (const line of text.split('\n')) {
    // An RFC's section is a public document's, and stays.
    const withoutRfc = line.replace(/RFC \d+ §[\d.]+/g, '')
    if (FOREIGN_REFERENCE.test(withoutRfc)) found.push(line.trim())
  }
  const flat = text.replace(/\s+/g, ' ')
  for (const [, heading] of flat.matchAll(/README, ([A-Za-z][A-Za-z -]*[A-Za-z])[);]/g))
    if (!README_HEADINGS.has(heading as string)) found.push(`README section '${heading}'`)
  for (const [path] of flat.matchAll(/\b(?:spec\/[\w.-]+\.json|docs\/[\w.-]+\.md)\b/g))
    if (!existsSync(join(ROOT, path))) found.push(path)
  return found
}

/**
 * The help of `lectern` as a user gets it, and that of every command under it, as `--help` prints
 * it, read from the program's command tree.
 */
async function everyHelp(): Promise<string[]> {
  const top = await runCli(['--help'])
  expect(top.code).toBe(0)
  const helps: string[] = []
  const visit = (command: Command) => {
    helps.push(command.helpInformation())
    command.commands.forEach(visit)
  }
  visit(buildProgram())
  return [top.stdout, ...helps]
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(ts|js|css|html)$/.test(entry.name) ? [path] : []
  })
}

// Nothing here touches a database: it runs once, in the SQLite project.
describe.runIf(TEST_DIALECT === 'sqlite')('what the CLI and the code refer to', () => {
  it('cites nothing in any help text that cannot be found inside the repository', async () => {
    const helps = await everyHelp()
    expect(helps.length).toBeGreaterThan(20)
    expect(helps.flatMap(unresolved)).toEqual([])
  })

  it('cites nothing in the source that cannot be found inside the repository', () => {
    // Migrations are frozen, byte for byte (their checksums are tested), so they are left as made.
    const files = sourceFiles(join(ROOT, 'src')).filter((file) => !file.includes('/db/migrations/'))
    const found = files.flatMap((file) =>
      unresolved(readFileSync(file, 'utf8')).map((what) => `${relative(ROOT, file)}: ${what}`),
    )
    expect(found).toEqual([])
  })
})
