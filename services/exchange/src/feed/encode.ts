/**
 * A frame for many connections, serialised and encoded to UTF-8 once: `ws` would otherwise encode a
 * string again for every connection it is sent to (1,000 subscribers, 1,000 encodings per frame).
 */
export function encode(frame: object | string): Buffer {
  return Buffer.from(typeof frame === 'string' ? frame : JSON.stringify(frame), 'utf8');
}
