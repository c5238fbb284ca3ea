// The exchange's /docs page: signs "Try it out" requests of signed v3 routes in the browser.
// Served by src/docs/register.ts as a Swagger UI theme script (a classic script, loaded after
// swagger-ui-bundle.js and before the page's window.onload builds the UI).
//
// The rule is src/auth/signature.ts, byte for byte:
//   svc-signature = lower-case hex(HMAC-SHA384(secret, apiPath + nonce + body)),
//   apiPath = the request's path as sent (no query string), body = the raw body bytes, `{}` when empty.
// The key comes from the svcApiKey header Swagger UI adds; the secret from the svcApiSecret field of
// Authorize, read from the page's state: it is never put on a request.
(() => {
  const here = document.currentScript.src;
  // HMAC-SHA384 of @noble/hashes, served by the exchange under /docs/signer/ (no CDN; no WebCrypto,
  // which a browser offers only on https or loopback pages).
  const hashes = Promise.all([
    import(new URL('../../signer/hmac.js', here).href),
    import(new URL('../../signer/sha2.js', here).href),
    import(new URL('../../signer/utils.js', here).href),
  ]).then(([hmacModule, sha2Module, utilsModule]) => ({
    hmac: hmacModule.hmac,
    sha384: sha2Module.sha384,
    bytesToHex: utilsModule.bytesToHex,
  }));

  let ui;
  // Nonces must grow for one key: two clicks in one millisecond still get two nonces.
  let lastNonce = 0;

  function headerName(headers, wanted) {
    return Object.keys(headers).find((name) => name.toLowerCase() === wanted);
  }

  function typedSecret() {
    const authorized = ui?.authSelectors?.authorized?.();
    const entry = authorized?.toJS ? authorized.toJS().svcApiSecret : undefined;
    return typeof entry?.value === 'string' && entry.value !== '' ? entry.value : undefined;
  }

  async function signRequest(request) {
    const headers = request.headers ?? {};
    const keyHeader = headerName(headers, 'svc-apikey');
    const secret = typedSecret();
    // Not a signed v3 request (the page's own fetches, public routes), or nothing to sign with.
    if (!keyHeader || !headers[keyHeader] || !secret) return request;
    for (const name of ['svc-nonce', 'svc-signature', 'svc-apisecret']) {
      const present = headerName(headers, name);
      if (present) delete headers[present];
    }
    // Sign the exact bytes that will be sent: a body Swagger UI holds as an object is sent as its JSON.
    let body = request.body;
    if (body !== undefined && body !== null && typeof body !== 'string') {
      body = JSON.stringify(body);
      request.body = body;
    }
    const url = new URL(request.url, window.location.href);
    const apiPath = url.pathname + url.search;
    lastNonce = Math.max(Date.now(), lastNonce + 1);
    const nonce = String(lastNonce);
    const { hmac, sha384, bytesToHex } = await hashes;
    const encoder = new TextEncoder();
    const message = encoder.encode(
      apiPath + nonce + (body === undefined || body === null || body === '' ? '{}' : body),
    );
    headers['svc-nonce'] = nonce;
    headers['svc-signature'] = bytesToHex(hmac(sha384, encoder.encode(secret), message));
    request.headers = headers;
    return request;
  }

  // The page's initializer calls SwaggerUIBundle(config) on load: hand it the interceptor, and keep
  // the UI it returns to read the Authorize state from. The bundle's own properties (presets,
  // plugins) stay on the wrapper.
  const original = window.SwaggerUIBundle;
  function SigningSwaggerUIBundle(config) {
    ui = original({ ...config, requestInterceptor: signRequest });
    return ui;
  }
  Object.assign(SigningSwaggerUIBundle, original);
  window.SwaggerUIBundle = SigningSwaggerUIBundle;
})();
