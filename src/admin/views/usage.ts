import { html, type SafeHtml } from '../../html.js'
import type { HourlyUsage, UsageCounts } from '../../services/usage.js'

const BAR = 4
const PLOT_HEIGHT = 100
const LABEL_HEIGHT = 16
/** How wide a day's label (`MM-DD` at font size 10) is drawn, with room to spare. */
const LABEL_WIDTH = 32

const plural = (n: number, word: string) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`

/**
 * A key's requests per hour as a small inline SVG bar chart, oldest hour on the left: served
 * requests in one colour with the 429s stacked on top in another, a line and a date at each day's
 * start, and each bar's numbers in its tooltip. Drawn on the server (no script, nothing inline the
 * content security policy would refuse); the summary above it says the same for screen readers.
 */
export function usageChart(hours: HourlyUsage[]): SafeHtml {
  const total = hours.reduce((sum, hour) => sum + hour.requests, 0)
  const rejected = hours.reduce((sum, hour) => sum + hour.rejected, 0)
  const max = Math.max(1, ...hours.map((hour) => hour.requests))
  const width = hours.length * BAR
  const scale = (n: number) => Math.round((n / max) * PLOT_HEIGHT * 10) / 10
  const bars = hours.map((hour, index) => {
    const x = index * BAR
    const served = scale(hour.requests - hour.rejected)
    const refused = scale(hour.rejected)
    const label = `${hour.hour.slice(0, 10)} ${hour.hour.slice(11, 16)} UTC: ${plural(hour.requests, 'request')}, ${hour.rejected} rejected (429)`
    return html`<g><title>${label}</title>${served > 0 ? html`<rect class="usage-served" fill="#2563eb" x="${x}" y="${PLOT_HEIGHT - served}" width="${BAR - 1}" height="${served}"/>` : ''}${refused > 0 ? html`<rect class="usage-rejected" fill="#dc2626" x="${x}" y="${PLOT_HEIGHT - served - refused}" width="${BAR - 1}" height="${refused}"/>` : ''}</g>`
  })
  // A day's label starts at its line; one too near the right edge to fit ends there instead.
  const dayLabel = (x: number, text: string) =>
    x + 2 + LABEL_WIDTH <= width
      ? html`<text class="usage-label" fill="#475569" font-size="10" x="${x + 2}" y="${PLOT_HEIGHT + 12}">${text}</text>`
      : html`<text class="usage-label" fill="#475569" font-size="10" text-anchor="end" x="${x - 2}" y="${PLOT_HEIGHT + 12}">${text}</text>`
  const days = hours.flatMap((hour, index) =>
    hour.hour.slice(11, 13) === '00'
      ? [
          html`<line class="usage-day" stroke="#94a3b8" x1="${index * BAR}" x2="${index * BAR}" y1="0" y2="${PLOT_HEIGHT}"/>${dayLabel(index * BAR, hour.hour.slice(5, 10))}`,
        ]
      : [],
  )
  return html`<section class="panel usage" aria-labelledby="usage-heading">
  <h2 id="usage-heading">Requests, last 7 days</h2>
  <p id="usage-summary">${plural(total, 'request')} in the last ${hours.length / 24} days, ${rejected === 0 ? 'none' : rejected.toLocaleString('en')} rejected for the rate limit (429), busiest hour ${plural(max === 1 && total === 0 ? 0 : max, 'request')}.</p>
  <svg class="usage-chart" viewBox="0 0 ${width} ${PLOT_HEIGHT + LABEL_HEIGHT}" width="100%" preserveAspectRatio="none" role="img" aria-labelledby="usage-heading usage-summary">
    <line stroke="#cbd5e1" x1="0" x2="${width}" y1="${PLOT_HEIGHT}" y2="${PLOT_HEIGHT}"/>
    ${days}${bars}
  </svg>
  <p class="muted"><span class="usage-key served">■</span> served <span class="usage-key rejected">■</span> rejected (429). Counted per hour in UTC; this instance's last minute is included, other instances' appear within a minute.</p>
</section>`
}

/** The overview's figure: every key's requests today. */
export function usageToday(counts: UsageCounts): string {
  return `${plural(counts.requests, 'request')} today, ${counts.rejected === 0 ? 'none' : counts.rejected.toLocaleString('en')} rejected (429)`
}
