import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** The project's `src/`, which the architecture tests read. */
export const SRC = resolve(import.meta.dirname, '..', '..', 'src')

/** Every source file under `dir`, tests left out. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })
}
