import { firstAndRemainder, plural, ValidationError } from '../../errors.js'

/** At most this many problems are listed; a final entry says how many more there were. */
export const MAX_LISTED_PROBLEMS = 100

/**
 * An import was refused and nothing was written. `problems` lists every problem with its location
 * (`line 12 (submission): formId 'form_x' does not exist`, `submissions[3].data: must be …`), the
 * first {@link MAX_LISTED_PROBLEMS} of them in file order, then `…and N more problems`.
 */
export class ImportError extends ValidationError {
  /** How many problems were found in all, listed or not. */
  readonly problemCount: number
  /**
   * What the file's check found worth a look besides its problems (an id that appears twice, a
   * redirect chain), listed like a successful import's warnings, so that one run shows them all.
   */
  readonly warnings: readonly string[]

  constructor(
    problems: readonly string[],
    problemCount: number = problems.length,
    warnings: readonly string[] = [],
  ) {
    super(
      `Import refused: ${problemCount} ${plural(problemCount, 'problem')}, nothing was written`,
      firstAndRemainder(problems, MAX_LISTED_PROBLEMS, 'problem', problemCount),
    )
    this.name = 'ImportError'
    this.problemCount = problemCount
    this.warnings = warnings
  }
}

/** The file changed between the validating and the writing pass. */
export function fileChangedError(): ImportError {
  return new ImportError(['the file changed while it was being imported; run the import again'])
}

/** The file cannot be read at all; `no such file` rather than the errno text when it is missing. */
export function unreadableFileError(path: string, error: unknown): ImportError {
  const code = (error as { code?: unknown } | null)?.code
  const reason = code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error)
  return new ImportError([`cannot read '${path}': ${reason}`])
}

/**
 * Keeps the first `limit` messages in file order and counts the rest. Messages arrive mostly in
 * order, but checks that need the whole file (unknown forms, duplicate paths) add earlier ones late.
 */
export class MessageList {
  private kept: { order: number; text: string }[] = []
  total = 0

  constructor(private readonly limit: number) {}

  add(order: number, text: string): void {
    this.total++
    this.kept.push({ order, text })
    if (this.kept.length > this.limit * 4) this.trim()
  }

  /** The kept messages, in file order. */
  texts(): string[] {
    this.trim()
    return this.kept.map((entry) => entry.text)
  }

  /** The kept messages, then `…and N more <noun>s` if some were not kept. */
  listed(noun: string): string[] {
    return firstAndRemainder(this.texts(), this.limit, noun, this.total)
  }

  private trim(): void {
    // A stable sort keeps several problems of one record in the order they were found.
    this.kept.sort((a, b) => a.order - b.order)
    if (this.kept.length > this.limit) this.kept.length = this.limit
  }
}
