import { formatTimestamp } from '../time.js'

/** The import document shape (the `.json` import format). */
export interface SampleDocument {
  forms: Record<string, unknown>[]
  submissions: Record<string, unknown>[]
  pages: Record<string, unknown>[]
  redirects: Record<string, unknown>[]
}

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Katherine',
  'Linus',
  'Margaret',
  'Tim',
  'Barbara',
  'Dennis',
  'Radia',
  'Ken',
  'Frances',
]
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Torvalds',
  'Hamilton',
  'Lee',
  'Liskov',
  'Ritchie',
  'Perlman',
]
const MESSAGES = [
  'Could you send me a quote for the spring project?',
  'Your opening hours on the website look out of date.',
  'I would love to know more about the workshop.',
  'Is there parking near the venue?',
  'Please call me back about my order.',
  'Do you offer a discount for charities?',
]
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
]

/** A small deterministic PRNG (mulberry32), so the demo looks the same on every machine. */
function random(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Realistic content for the demo: a few forms with dozens of submissions, published and draft
 * pages, and redirects including an inactive one. Dates lie in the 90 days before `now`.
 */
export function buildSampleContent(now: Date = new Date(), seed = 42): SampleDocument {
  const next = random(seed)
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]
  const daysAgo = (days: number) => formatTimestamp(new Date(now.getTime() - days * 86_400_000))

  const forms = [
    {
      id: 'form_contact',
      title: 'Contact us',
      description: 'General enquiries from the contact page',
      isActive: true,
      createdAt: daysAgo(90),
      submissions: 36,
    },
    {
      id: 'form_newsletter',
      title: 'Newsletter signup',
      description: null,
      isActive: true,
      createdAt: daysAgo(80),
      submissions: 48,
    },
    {
      id: 'form_event_2024',
      title: 'Summer event registration',
      description: 'Closed after the event',
      isActive: false,
      createdAt: daysAgo(70),
      submissions: 24,
    },
    {
      id: 'form_careers',
      title: 'Job application',
      description: 'Applications for open positions',
      isActive: true,
      createdAt: daysAgo(30),
      submissions: 0,
    },
  ]

  const submissions: Record<string, unknown>[] = []
  for (const form of forms) {
    for (let i = 0; i < form.submissions; i++) {
      const first = pick(FIRST)
      const last = pick(LAST)
      const email = `${first}.${last}@example.com`.toLowerCase()
      const data: Record<string, unknown> =
        form.id === 'form_newsletter'
          ? { email, topics: next() < 0.5 ? ['news'] : ['news', 'events'] }
          : form.id === 'form_event_2024'
            ? { name: `${first} ${last}`, email, guests: Math.floor(next() * 4) }
            : { name: `${first} ${last}`, email, message: pick(MESSAGES) }
      const createdAt = daysAgo(next() * 60)
      submissions.push({
        formId: form.id,
        data,
        ipAddress: `203.0.113.${1 + Math.floor(next() * 250)}`,
        userAgent: pick(AGENTS),
        referrer: next() < 0.5 ? 'https://www.example.com/contact' : null,
        submittedBy: null,
        isRead: next() < 0.6,
        isStarred: next() < 0.15,
        notes: next() < 0.1 ? 'Followed up by phone' : null,
        createdAt,
        updatedAt: createdAt,
      })
    }
  }

  const page = (title: string, path: string, isPublished: boolean, days: number, pageType = 'page') => ({
    title,
    slug: path === '/' ? 'home' : (path.split('/').pop() as string),
    path,
    pageType,
    isPublished,
    publishedAt: isPublished ? daysAgo(days - 1) : null,
    createdAt: daysAgo(days),
    updatedAt: daysAgo(Math.max(0, days - 5)),
  })
  const pages = [
    page('Home', '/', true, 88),
    page('About us', '/about', true, 87),
    page('Services', '/services', true, 86),
    page('Blog', '/blog', true, 85, 'blog'),
    page('Launching our new website', '/blog/new-website', true, 40, 'post'),
    page('Contact', '/contact', true, 84),
    page('Pricing', '/pricing', false, 12),
    page('Privacy policy', '/privacy', true, 83, 'legal'),
  ]

  const redirect = (
    fromPath: string,
    toPath: string,
    type: 'permanent' | 'temporary',
    isActive: boolean,
    days: number,
  ) => ({
    fromPath,
    toPath,
    type,
    isActive,
    createdAt: daysAgo(days),
    updatedAt: daysAgo(days),
  })
  const redirects = [
    redirect('/about-us', '/about', 'permanent', true, 60),
    redirect('/news', '/blog', 'permanent', true, 55),
    redirect('/offers', '/pricing', 'temporary', true, 20),
    redirect('/summer-sale', '/pricing', 'temporary', false, 50),
    redirect('/team', '/about', 'permanent', true, 10),
  ]

  return {
    forms: forms.map(({ submissions: _count, ...form }) => ({ ...form, updatedAt: form.createdAt })),
    submissions,
    pages,
    redirects,
  }
}
