import type { App } from '../../src/http/typed.js';
import { clientSignV2, nextNonce, v3Headers } from './signing.js';

/** A signed client of one API key over `app.inject`, written from the reference page. */
export function client(app: () => App, apiKey: string, secret: string) {
  const v2Params = (verb: string, uri: string, params: Record<string, string>) => {
    const all = { ...params, access_key: apiKey, tonce: nextNonce() };
    return { ...all, signature: clientSignV2(secret, verb, uri, all) };
  };
  return {
    v2Get(uri: string, params: Record<string, string> = {}) {
      const query = new URLSearchParams(v2Params('GET', uri, params)).toString();
      return app().inject({ method: 'GET', url: `${uri}?${query}` });
    },
    v2Post(uri: string, params: Record<string, string>) {
      return app().inject({
        method: 'POST',
        url: uri,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(v2Params('POST', uri, params)).toString(),
      });
    },
    /** `headers`: more request headers (an Accept-Language), besides the signature's. */
    v3(path: string, body: unknown = {}, headers: Record<string, string> = {}) {
      const text = JSON.stringify(body);
      return app().inject({
        method: 'POST',
        url: path,
        payload: text,
        headers: { ...headers, ...v3Headers(apiKey, secret, path, text) },
      });
    },
  };
}

export type Client = ReturnType<typeof client>;
