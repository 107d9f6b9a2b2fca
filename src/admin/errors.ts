/** A dashboard failure shown to the user as an HTML page with this status, title and message. */
export class DashboardError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    /** Extra response headers (e.g. `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'DashboardError'
  }
}

export const forbidden = () =>
  new DashboardError(
    403,
    'Not allowed',
    'Your role does not give access to this page. Ask a global admin if you need it.',
  )

export const expiredForm = () =>
  new DashboardError(
    403,
    'This form has expired',
    'The form was not sent from this dashboard, or it is too old. Go back, reload the page and try again.',
  )
