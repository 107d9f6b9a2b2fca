import { html, type SafeHtml } from '../../html.js'

/**
 * The small pages a browser posting a plain `<form>` sees: a thanks, or what was wrong with a
 * link back. Self-contained (no assets, no script), so a site's visitors never load anything else.
 */
function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}h1{font-size:1.5rem}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.value
}

/**
 * Where "back" leads: the page the form was on, when the browser said so and it is a web address;
 * else the page before this one in the browser's history (the form, for a browser that posted it).
 */
function backLink(referrer: string | null): SafeHtml {
  const href = referrer !== null && /^https?:\/\//i.test(referrer) ? referrer : 'javascript:history.back()'
  return html`<p><a href="${href}">Go back to the form</a></p>`
}

export function thankYouPage(referrer: string | null): string {
  return page(
    'Thank you',
    html`<h1>Thank you</h1>
<p>Your submission has been received.</p>
${backLink(referrer)}`,
  )
}

/** The page of a refused post: the same status, each problem listed. */
export function problemPage(
  heading: string,
  message: string,
  fields: Record<string, string>,
  referrer: string | null,
): string {
  const problems = Object.entries(fields)
  return page(
    heading,
    html`<h1>${heading}</h1>
<p>${message}</p>
${problems.length > 0 ? html`<ul>${problems.map(([name, problem]) => html`<li><strong>${name}</strong> ${problem}</li>`)}</ul>` : ''}
${backLink(referrer)}`,
  )
}
