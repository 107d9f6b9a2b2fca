/** How one attempt at a delivery ended, by webhook (`post.ts`) or by email (`send.ts`). */
export interface Outcome {
  ok: boolean
  lastStatus: string
  responseCode: number | null
  error: string | null
  /** The endpoint answered 410 Gone: disable it. */
  gone?: boolean
  /** Never worth retrying (no recipients, no mail configured, endpoint disabled). */
  final?: boolean
}
