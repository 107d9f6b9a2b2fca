import type { Compilable, CompiledQuery } from 'kysely'
import type { Executor } from './executor.js'

/** A compiled statement, and for each of its parameters the position of its value among the rows' values. */
interface UpsertTemplate {
  compiled: CompiledQuery
  positions: number[]
}

/**
 * Multi-row statements run through templates: the statement for a kind, a number of rows and their
 * columns is built and compiled once, then run with each batch's values. Building and compiling a
 * query of 500 rows anew took longer than SQLite's writing of them (the import's upserts and stage).
 */
export class StatementTemplates {
  /** Compiled statements by kind, row count and columns (see {@link run}); undefined: not templatable. */
  private readonly templates = new Map<string, UpsertTemplate | undefined>()

  constructor(private readonly trx: Executor) {}

  /**
   * Runs the statement `build` makes for `rows` (which share their columns) through a template
   * compiled once per `kind`, row count and columns, with this batch's values.
   */
  async run<R extends object>(kind: string, rows: R[], build: (rows: R[]) => Compilable): Promise<void> {
    const columns = Object.keys(rows[0])
    const template = this.template(`${kind}:${rows.length}:${columns.join(',')}`, rows.length, columns, build)
    if (template === undefined) return this.runBuilt(build(rows))
    const values: unknown[] = []
    for (const row of rows) {
      const record = row as Record<string, unknown>
      // Rows are made by one function per table, so they have the same columns; an absent value
      // would be the column's default in a built query, which a template cannot say.
      for (const column of columns) {
        const value = record[column]
        if (value === undefined) return this.runBuilt(build(rows))
        values.push(value)
      }
    }
    await this.trx.executeQuery({
      ...template.compiled,
      parameters: template.positions.map((position) => values[position]),
    })
  }

  private async runBuilt(query: Compilable): Promise<void> {
    await this.trx.executeQuery(query.compile())
  }

  /** The statement `build` makes for `count` rows of `columns`, compiled with markers for its values. */
  private template<R extends object>(
    key: string,
    count: number,
    columns: string[],
    build: (rows: R[]) => Compilable,
  ): UpsertTemplate | undefined {
    if (this.templates.has(key)) return this.templates.get(key)
    // Each value is a distinct marker object: where it lands among the compiled parameters says
    // which row and column fills that parameter.
    const markers = new Map<object, number>()
    const rows = Array.from({ length: count }, (_, row) =>
      Object.fromEntries(
        columns.map((column, index) => {
          const marker = {}
          markers.set(marker, row * columns.length + index)
          return [column, marker]
        }),
      ),
    )
    const compiled = build(rows as R[]).compile()
    const positions = compiled.parameters.map((parameter) => markers.get(parameter as object) ?? -1)
    const complete = positions.length === markers.size && positions.every((position) => position >= 0)
    const template = complete ? { compiled, positions } : undefined
    this.templates.set(key, template)
    return template
  }
}
