import {
  type AliasedRawBuilder,
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SelectQueryBuilder,
  sql,
} from 'kysely'
import type { ListOptions, PageOf, Submission, SubmissionFilters } from '../../schemas.js'
import { type FormState, formState } from '../content-version.js'
import type { DatabaseHandle } from '../database.js'
import { param } from '../prepared.js'
import type { FormsTable, PagesTable, RedirectsTable } from '../tables.js'
import { KeysetPager, type PagerQueries } from './paging.js'

/**
 * A placeholder for LIMIT or OFFSET, written as an expression: SQLite plans with the value bound to
 * a bare LIMIT or OFFSET parameter, so binding a new one re-prepares the statement on every run
 * (parsed and planned again: about 6 µs in a loop, 20 µs inside a busy server). Through a cast the
 * value is only read when the statement runs.
 */
const boundNumber = (name: string) => sql<number>`cast(${param<number>(name)} as integer)`

type ListTable = 'forms' | 'submissions' | 'pages' | 'redirects'
type FilterColumn = 'is_active' | 'is_published' | 'form_id' | 'is_read' | 'is_starred' | 'created_at'

/** One condition of a pager's filter: `column op :placeholder`. */
export interface FilterCondition {
  column: FilterColumn
  op: '=' | '>=' | '<'
  placeholder: string
}

/**
 * Prepares the four queries of one list's pager: `table`, optionally filtered on `filter` (the
 * `value` placeholder), in (created_at, id) order. All SQL is built by Kysely; the filter shape is
 * fixed per pager so each query is prepared once.
 */
export function pagerQueries<Row>(
  handle: DatabaseHandle,
  table: ListTable,
  /** One column compared for equality with the `value` placeholder, or several conditions. */
  filter: FilterColumn | readonly FilterCondition[] | undefined,
  direction: 'asc' | 'desc',
  /**
   * What a page holds: its rows with every column, or one row whose `json` is the rows' own `json`
   * column (the item as the API writes it) joined by commas (see `JsonSql.joined`).
   */
  selection: 'columns' | 'joined json' = 'columns',
): PagerQueries<Row> {
  const db = handle.db as unknown as Kysely<Record<ListTable, OrderedRow>>
  const conditions: readonly FilterCondition[] =
    filter === undefined
      ? []
      : typeof filter === 'string'
        ? [{ column: filter, op: '=', placeholder: 'value' }]
        : filter
  const where = <Q extends { where: FilterWhere<Q> }>(query: Q): Q =>
    conditions.reduce((q, c) => q.where(c.column, c.op, param(c.placeholder)), query)
  const base = () => where(db.selectFrom(table))
  const ordered = <Q extends OrderableQuery<Q>>(query: Q) =>
    query
      .orderBy('created_at', direction)
      .orderBy('id', direction)
      .limit(boundNumber('limit'))
      .offset(boundNumber('offset'))
  const rows = <Q extends SelectableQuery<Q>>(query: Q): Q =>
    selection === 'columns' ? query.selectAll() : query.select(sql.ref<string>('json').as('json'))
  // The aggregate reads the page's rows in the order the subquery gives them: a subquery with a
  // LIMIT is never flattened into its aggregate or reordered (SQLite runs it as a co-routine,
  // PostgreSQL as a subquery scan over the ordered index scan), which the tests of page order hold
  // on both. An ORDER BY inside the aggregate would sort the rows' text again (+50% on SQLite).
  const joined = handle.json.joined
  const page = <Q extends SelectableQuery<Q>>(query: Q) =>
    selection === 'columns' || joined === undefined
      ? query
      : db.selectFrom((query as unknown as AnySelect).as('page')).select(joined('json').as('json'))
  const boundary = direction === 'desc' ? '<=' : '>='
  return {
    count: handle.prepare(base().select((eb) => eb.fn.countAll<number>().as('total'))),
    fromStart: handle.prepare(page(ordered(rows(base()))) as never),
    fromKey: handle.prepare(
      page(
        ordered(
          rows(base()).where((eb: ExpressionBuilder<Record<ListTable, OrderedRow>, ListTable>) =>
            eb(eb.refTuple('created_at', 'id'), boundary, eb.tuple(param('createdAt'), param('id'))),
          ),
        ),
      ) as never,
    ),
    boundaries: handle.prepare(
      db
        .selectFrom((eb) =>
          where(eb.selectFrom(table))
            .select((inner) => [
              'created_at',
              'id',
              inner.fn
                .agg<number>('row_number')
                .over((over) => over.orderBy('created_at', direction).orderBy('id', direction))
                .as('position'),
            ])
            .as('numbered'),
        )
        .select(['created_at', 'id'])
        .where((eb) => eb(eb.parens(eb.parens('position', '-', 1), '%', param<number>('step')), '=', 0))
        .orderBy('position'),
    ),
  }
}

const pagerFor = <Row>(...args: Parameters<typeof pagerQueries<Row>>) =>
  new KeysetPager<Row>(pagerQueries<Row>(...args))

/** The columns every list table shares, as far as paging is concerned. */
interface OrderedRow {
  id: string
  created_at: string
  is_active: number
  is_published: number
  form_id: string
  is_read: number
  is_starred: number
}
type AnySelect = SelectQueryBuilder<Record<ListTable, OrderedRow>, ListTable, { json: string }>
type FilterWhere<Q> = (column: FilterColumn, op: FilterCondition['op'], value: unknown) => Q
type SelectableQuery<Q> = {
  selectAll(): Q
  select(selection: AliasedRawBuilder<string, 'json'>): Q
}
type OrderableQuery<Q> = {
  orderBy(column: 'created_at' | 'id', direction: 'asc' | 'desc'): Q
  limit(value: RawBuilder<number>): Q
  offset(value: RawBuilder<number>): Q
}

/** A page of items as JSON text: the items written and joined by commas, without the brackets. */
export interface JsonPage {
  /** Empty for no items. */
  json: string
  total: number
}

/** The one row of a joined page (see `pagerFor`), or none past the end. */
/**
 * The rows of a page of JSON items: one row holding them all when the database joins them (or one
 * NULL row for none), else one row per item; joined by commas, either gives the items' text.
 */
type JoinedRow = { json: string | null }
const joinedJson = (rows: JoinedRow[]): string =>
  rows.length === 1 ? (rows[0].json ?? '') : rows.map((row) => row.json).join(',')
const submissionsOf = (rows: JoinedRow[]) => JSON.parse(`[${joinedJson(rows)}]`) as Submission[]

const offsetOf = ({ page, pageSize }: ListOptions) => (page - 1) * pageSize

/** The filters in the order their conditions are written, each with its column and comparison. */
const SUBMISSION_FILTERS = [
  ['isRead', { column: 'is_read', op: '=', placeholder: 'isRead' }],
  ['isStarred', { column: 'is_starred', op: '=', placeholder: 'isStarred' }],
  ['since', { column: 'created_at', op: '>=', placeholder: 'since' }],
  ['until', { column: 'created_at', op: '<', placeholder: 'until' }],
] as const satisfies readonly (readonly [keyof SubmissionFilters, FilterCondition])[]

/** The filters given, in `SUBMISSION_FILTERS` order; none for an unfiltered list. */
const filtersGiven = (filters: SubmissionFilters | undefined) =>
  SUBMISSION_FILTERS.filter(([name]) => filters?.[name] !== undefined)

/** A filter's value as bound: flags are stored as 0 and 1. */
const boundFilter = (value: string | boolean) => (typeof value === 'boolean' ? (value ? 1 : 0) : value)

/**
 * Read queries behind the four list endpoints, prepared once. Pass the version of the list's kind
 * the caller read (see `checkApiKey`), or a form's state for its submissions, to let totals and
 * deep-page positions be reused while it holds.
 */
export function createContentRepository(handle: DatabaseHandle) {
  const forms = {
    all: pagerFor<Selectable<FormsTable>>(handle, 'forms', undefined, 'asc'),
    filtered: pagerFor<Selectable<FormsTable>>(handle, 'forms', 'is_active', 'asc'),
  }
  const pages = {
    all: pagerFor<Selectable<PagesTable>>(handle, 'pages', undefined, 'asc'),
    filtered: pagerFor<Selectable<PagesTable>>(handle, 'pages', 'is_published', 'asc'),
  }
  const redirects = {
    all: pagerFor<Selectable<RedirectsTable>>(handle, 'redirects', undefined, 'asc'),
    filtered: pagerFor<Selectable<RedirectsTable>>(handle, 'redirects', 'is_active', 'asc'),
  }
  // Each row's JSON is the database's own column (migration 009); a page joins them.
  const submissions = pagerFor<JoinedRow>(handle, 'submissions', 'form_id', 'desc', 'joined json')
  // One pager per shape of filter (which filters are given), prepared the first time it is asked
  // for: the flags come before the window in every index of migration 013, so each shape reads one
  // contiguous range of one index in order.
  const filteredSubmissions = new Map<string, KeysetPager<JoinedRow>>()
  const filteredPager = (given: ReturnType<typeof filtersGiven>) => {
    const shape = given.map(([name]) => name).join(',')
    let pager = filteredSubmissions.get(shape)
    if (pager === undefined) {
      const conditions: FilterCondition[] = [
        { column: 'form_id', op: '=', placeholder: 'value' },
        ...given.map(([, condition]) => condition),
      ]
      pager = pagerFor<JoinedRow>(handle, 'submissions', conditions, 'desc', 'joined json')
      filteredSubmissions.set(shape, pager)
    }
    return pager
  }

  /**
   * A filtered page of a form's submissions and its total. The total is counted over the index
   * and kept, like the page positions, while the form's version holds.
   */
  const filteredSubmissionsPage = async (
    formId: string,
    options: ListOptions,
    state: FormState,
    filters: SubmissionFilters,
  ) => {
    const given = filtersGiven(filters)
    const values: Record<string, unknown> = { value: formId }
    const scope = [`submissions:${formId}`]
    for (const [name] of given) {
      const value = filters[name] as string | boolean
      values[name] = boundFilter(value)
      scope.push(`${name}=${value}`)
    }
    return listPage(
      filteredPager(given),
      scope.join('\u0000'),
      values,
      options,
      state.version,
      (rows) => rows,
    )
  }

  // A form's submissions' version, total and unread count, and whether the form exists, in one
  // read of the row the database keeps for it (migration 010).
  const formStateById = handle.prepare(
    handle.db
      .selectFrom('form_submission_counts')
      .leftJoin('forms', 'forms.id', 'form_submission_counts.form_id')
      .select([
        'form_submission_counts.version',
        'form_submission_counts.total',
        'form_submission_counts.unread',
        'forms.id as present',
      ])
      .where('form_submission_counts.form_id', '=', param('id')),
  )

  /** One page of `scope`, as `present` makes it of the rows, and its total; past the end no query runs. */
  async function listPage<Row, Items>(
    pager: KeysetPager<Row>,
    scope: string,
    values: Record<string, unknown>,
    options: ListOptions,
    version: number | undefined,
    present: (rows: Row[]) => Items,
  ): Promise<{ items: Items; total: number }> {
    const total = await pager.total(scope, values, version)
    const offset = offsetOf(options)
    const rows = offset >= total ? [] : await pager.page(scope, values, offset, options.pageSize, version)
    return { items: present(rows), total }
  }

  /** The rows of one page of a form's submissions; past the end no query runs. */
  const submissionsPage = async (formId: string, options: ListOptions, state: FormState) => {
    const offset = offsetOf(options)
    if (offset >= state.total) return []
    return submissions.page(
      `submissions:${formId}`,
      { value: formId },
      offset,
      options.pageSize,
      state.version,
    )
  }

  const rowsAsTheyAre = <Row>(rows: Row[]) => rows

  /** One page of a list that may be filtered on a flag. */
  const listFlagged = <Row>(
    pagers: { all: KeysetPager<Row>; filtered: KeysetPager<Row> },
    name: string,
    flag: boolean | undefined,
    options: ListOptions,
    version: number | undefined,
  ): Promise<PageOf<Row>> =>
    flag === undefined
      ? listPage(pagers.all, `${name}:all`, {}, options, version, rowsAsTheyAre)
      : listPage(pagers.filtered, `${name}:${flag}`, { value: flag ? 1 : 0 }, options, version, rowsAsTheyAre)

  return {
    /** A page of forms' rows, oldest first, and the total; the service presents them. */
    listForms: (options: ListOptions & { active?: boolean }, version?: number) =>
      listFlagged(forms, 'forms', options.active, options, version),

    /** A page of pages' rows, oldest first, and the total. */
    listPages: (options: ListOptions & { published?: boolean }, version?: number) =>
      listFlagged(pages, 'pages', options.published, options, version),

    /** A page of redirects' rows, oldest first, and the total. */
    listRedirects: (options: ListOptions & { active?: boolean }, version?: number) =>
      listFlagged(redirects, 'redirects', options.active, options, version),

    /** What the database keeps about form `id`'s submissions, read now (see `FormState`). */
    formState: async (id: string): Promise<FormState> => formState((await formStateById({ id }))[0]),

    /**
     * A page of a form's submissions, with `state` read for the form after the request arrived: its
     * total is the page's, and its version keys the position index of deep pages.
     */
    listSubmissionsForForm: async (
      formId: string,
      options: ListOptions,
      state: FormState,
      filters?: SubmissionFilters,
    ): Promise<PageOf<Submission>> => {
      if (filtersGiven(filters).length > 0) {
        const page = await filteredSubmissionsPage(formId, options, state, filters as SubmissionFilters)
        return { items: submissionsOf(page.items), total: page.total }
      }
      const page = await submissionsPage(formId, options, state)
      return { items: submissionsOf(page), total: state.total }
    },

    /** The same page as `listSubmissionsForForm`, its items already JSON text (see `submissionJson`). */
    listSubmissionsJsonForForm: async (
      formId: string,
      options: ListOptions,
      state: FormState,
      filters?: SubmissionFilters,
    ): Promise<JsonPage> => {
      // Unfiltered, the total is the form's own count, kept by the database: no COUNT at all.
      if (filtersGiven(filters).length === 0)
        return { json: joinedJson(await submissionsPage(formId, options, state)), total: state.total }
      const page = await filteredSubmissionsPage(formId, options, state, filters as SubmissionFilters)
      return { json: joinedJson(page.items), total: page.total }
    },
  }
}

export type ContentRepository = ReturnType<typeof createContentRepository>
