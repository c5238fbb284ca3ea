/**
 * The GraphQL playground (GraphiQL, what `GET /graphql` shows a browser) served from this server:
 * graphql-yoga's own page loads its script, style and editor workers from a public CDN, which a test
 * machine or a closed production network cannot reach. `@graphql-yoga/render-graphiql` ships the
 * same GraphiQL build as strings; the page below references them under `/playground/`, so a browser
 * fetches each once (cacheable) instead of a 9 MB page on every visit.
 */

/** The URL paths of the assets (the route table, `routes.ts`, lists them). */
export const PLAYGROUND_ASSETS = {
  script: '/playground/yoga-graphiql.js',
  style: '/playground/graphiql.css',
  favicon: '/playground/favicon.ico',
  editorWorker: '/playground/editor.worker.js',
  jsonWorker: '/playground/json.worker.js',
  graphqlWorker: '/playground/graphql.worker.js',
} as const;

export interface PlaygroundAsset {
  readonly contentType: string;
  readonly body: string | Buffer;
}

type AssetPath = (typeof PLAYGROUND_ASSETS)[keyof typeof PLAYGROUND_ASSETS];

let loaded: Promise<ReadonlyMap<AssetPath, PlaygroundAsset>> | undefined;

/**
 * The asset at one of the paths above. The package's module (9 MB of strings) is imported on the
 * first request for an asset, not at start: most blog processes never show the page.
 */
export async function playgroundAsset(path: AssetPath): Promise<PlaygroundAsset> {
  loaded ??= import('@graphql-yoga/render-graphiql/graphiql').then((bundle) => {
    const javascript = 'text/javascript; charset=utf-8';
    const icon = /^data:([^;,]+);base64,(.*)$/.exec(bundle.favicon);
    return new Map<AssetPath, PlaygroundAsset>([
      [PLAYGROUND_ASSETS.script, { contentType: javascript, body: bundle.js }],
      [PLAYGROUND_ASSETS.style, { contentType: 'text/css; charset=utf-8', body: bundle.css }],
      [PLAYGROUND_ASSETS.editorWorker, { contentType: javascript, body: bundle.editorWorkerService }],
      [PLAYGROUND_ASSETS.jsonWorker, { contentType: javascript, body: bundle.jsonWorker }],
      [PLAYGROUND_ASSETS.graphqlWorker, { contentType: javascript, body: bundle.graphqlWorker }],
      [
        PLAYGROUND_ASSETS.favicon,
        { contentType: icon?.[1] ?? 'image/x-icon', body: Buffer.from(icon?.[2] ?? '', 'base64') },
      ],
    ]);
  });
  const asset = (await loaded).get(path);
  if (!asset) throw new Error(`no playground asset ${path}`);
  return asset;
}

export function isPlaygroundAsset(path: string): path is AssetPath {
  return (Object.values(PLAYGROUND_ASSETS) as string[]).includes(path);
}

const escapeForScript = (json: string): string => json.replace(/</g, '\\u003c');

/** The playground page graphql-yoga renders for a browser's `GET /graphql` (its `renderGraphiQL`). */
export function renderPlaygroundPage(options: { readonly title?: string } & object): string {
  const title = (options.title ?? 'Blog GraphQL playground').replace(/[<>&"]/g, '');
  const workers = {
    editorWorkerService: PLAYGROUND_ASSETS.editorWorker,
    json: PLAYGROUND_ASSETS.jsonWorker,
    graphql: PLAYGROUND_ASSETS.graphqlWorker,
  };
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title}</title>
    <link rel="icon" href="${PLAYGROUND_ASSETS.favicon}" />
    <link rel="stylesheet" href="${PLAYGROUND_ASSETS.style}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${escapeForScript(JSON.stringify(workers))};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workers[label] };
    </script>
    <script src="${PLAYGROUND_ASSETS.script}"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${escapeForScript(JSON.stringify({ ...options, title }))});
    </script>
  </body>
</html>
`;
}
