import type { BlogState, PostRecord } from './model.js';

const TOPICS = [
  ['Hello world', 'Welcome to the demo blog. This is the first post.'],
  ['Caching GraphQL responses', 'Why a proxy in front of a GraphQL API can serve most reads from a cache.'],
  ['Working offline', 'Queue the writes, serve the reads you have, replay when the network returns.'],
  ['Idempotency keys', 'A retried request must not create the same post twice.'],
  ['Cursor pagination', 'Cursors stay valid when items are inserted before them; offsets do not.'],
  [
    'Atomic file writes',
    'Write to a temporary file and rename it: readers see the old or the new file, never half.',
  ],
  ['Least recently used', 'A bounded cache forgets the entries nobody asked for lately.'],
  ['Backoff with a ceiling', 'Retry soon, then less often, but never give up entirely.'],
  ['Stale if error', 'An old answer is often better than no answer at all.'],
  ['Normalised documents', 'Whitespace and comments must not split a cache.'],
  ['Draft: upcoming features', 'Not published yet.'],
  ['Release notes', 'What changed in the latest version of the platform.'],
] as const;

/** The sample content written when the blog starts with no data file. Dates are fixed, not "now". */
export function seedState(): BlogState {
  const users = [
    { databaseId: 1, name: 'Ada Admin', slug: 'ada-admin', description: 'Runs the blog.' },
    { databaseId: 2, name: 'Ed Editor', slug: 'ed-editor', description: 'Writes most posts.' },
  ];
  const categories = [
    { databaseId: 3, name: 'Uncategorized', slug: 'uncategorized', description: '' },
    { databaseId: 4, name: 'Engineering', slug: 'engineering', description: 'How things are built.' },
    { databaseId: 5, name: 'News', slug: 'news', description: 'Announcements.' },
  ];
  const tags = [
    { databaseId: 6, name: 'graphql', slug: 'graphql', description: '' },
    { databaseId: 7, name: 'caching', slug: 'caching', description: '' },
    { databaseId: 8, name: 'offline', slug: 'offline', description: '' },
  ];
  const posts: PostRecord[] = TOPICS.map(([title, text], index) => {
    const day = String(index + 1).padStart(2, '0');
    const isDraft = title.startsWith('Draft');
    return {
      databaseId: 10 + index,
      title,
      content: `<p>${text}</p>`,
      excerpt: `<p>${text.split('.')[0]}.</p>`,
      slug: title
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/-+$/, ''),
      date: `2024-01-${day}T09:00:00`,
      modified: `2024-01-${day}T09:00:00`,
      status: isDraft ? 'draft' : 'publish',
      authorId: index % 2 === 0 ? 1 : 2,
      categoryIds: index === 0 ? [3] : index === 11 ? [5] : [4],
      tagIds: index === 1 || index === 6 || index === 8 ? [6, 7] : index === 2 ? [8] : [6],
    };
  });
  const pages = [
    {
      databaseId: 30,
      title: 'About',
      content: '<p>A demo blog served by blog-graphql.</p>',
      slug: 'about',
      date: '2024-01-01T08:00:00',
      modified: '2024-01-01T08:00:00',
      status: 'publish' as const,
      authorId: 1,
    },
    {
      databaseId: 31,
      title: 'Contact',
      content: '<p>Write to the editors.</p>',
      slug: 'contact',
      date: '2024-01-01T08:00:00',
      modified: '2024-01-01T08:00:00',
      status: 'publish' as const,
      authorId: 1,
    },
  ];
  return { nextId: 100, users, categories, tags, posts, pages };
}
