import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SRC, sourceFiles } from './source-files.js'

/**
 * The layering in ARCHITECTURE.md, read from the code itself: each source file's imports, resolved to
 * files under `src/`. The layers are judged on run-time imports only: a type-only import vanishes
 * when compiled and shares a shape, not behaviour. Cycles are judged on every import, types
 * included: a loop of types still ties the files' meanings together.
 */

/** The `src/`-relative files that `file` imports: at run time, or with `types` also type-only. */
function importsOf(file: string, types: boolean): string[] {
  const text = readFileSync(file, 'utf8')
  const found: string[] = []
  const statement = /^(import|export)\s+(type\s+)?(?:[^'"]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm
  for (const match of text.matchAll(statement)) {
    if (match[2] && !types) continue
    const target = resolve(dirname(file), (match[3] as string).replace(/\.js$/, '.ts'))
    found.push(relative(SRC, target))
  }
  return found
}

const files = sourceFiles(SRC)
const graph = new Map(files.map((file) => [relative(SRC, file), importsOf(file, false)]))
const graphWithTypes = new Map(files.map((file) => [relative(SRC, file), importsOf(file, true)]))

/** Where the program is put together: these may reach every layer. */
const COMPOSITION_ROOTS = new Set([
  'app.ts',
  'server.ts',
  'openapi-document.ts',
  'cli/main.ts',
  'cli/context.ts',
  'cli/demo.ts',
])

function violations(from: (file: string) => boolean, to: (target: string) => boolean): string[] {
  return [...graph].flatMap(([file, targets]) =>
    from(file) && !COMPOSITION_ROOTS.has(file)
      ? targets.filter(to).map((target) => `${file} -> ${target}`)
      : [],
  )
}

const under =
  (...dirs: string[]) =>
  (file: string) =>
    dirs.some((dir) => file.startsWith(`${dir}/`))

describe('the import boundaries of src/', () => {
  it('reads a plausible number of files and imports, so the rules below are not vacuous', () => {
    expect(graph.size).toBeGreaterThan(100)
    expect([...graph.values()].flat().length).toBeGreaterThan(300)
    // Type-only imports are read too, for the cycles.
    expect([...graphWithTypes.values()].flat().length).toBeGreaterThan([...graph.values()].flat().length)
    expect(graph.get('http/api/v1/pipeline.ts')?.length).toBeGreaterThan(0)
  })

  it('keeps the faces (HTTP API, intake, dashboard, CLI) away from the database layer', () => {
    expect(violations(under('http', 'admin', 'cli'), under('db'))).toEqual([])
  })

  it('keeps services, resources, rate limits and the database layer away from every face', () => {
    expect(
      violations(under('services', 'resources', 'ratelimit', 'db'), under('http', 'admin', 'cli')),
    ).toEqual([])
  })

  it('keeps the database layer from calling up into the services', () => {
    expect(violations(under('db'), under('services', 'resources'))).toEqual([])
  })

  it('keeps the resources below the services and the database layer: they describe, never act', () => {
    expect(violations(under('resources'), under('services', 'db'))).toEqual([])
  })

  it('keeps the faces apart from one another', () => {
    expect([
      ...violations(under('admin'), under('http', 'cli')),
      ...violations(under('http'), under('admin', 'cli')),
      ...violations(under('cli'), under('http', 'admin')),
    ]).toEqual([])
  })

  it('has no import cycle, not even through types', () => {
    const cycles: string[] = []
    const state = new Map<string, 'visiting' | 'done'>()
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '))
        return
      }
      state.set(file, 'visiting')
      for (const target of graphWithTypes.get(file) ?? []) visit(target, [...path, file])
      state.set(file, 'done')
    }
    for (const file of graphWithTypes.keys()) visit(file, [])
    expect(cycles).toEqual([])
  })

  it("leaves the test suite's lower password cost to the test suite: no source file calls its setter", () => {
    const callers = [...graph.keys()].filter(
      (file) =>
        file !== 'services/passwords.ts' &&
        readFileSync(join(SRC, file), 'utf8').includes('setPasswordCostForTests'),
    )
    expect(callers).toEqual([])
  })
})
