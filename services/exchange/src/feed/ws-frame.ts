/**
 * A server-to-client WebSocket text frame (RFC 6455 section 5.2: FIN, opcode 1, unmasked, the
 * payload length in 7, 16 or 64 bits), made once per frame and written as is to every connection
 * that receives it: the same bytes for all, so a frame for 1,000 subscribers costs one framing and
 * no copy per subscriber (`ws` would frame it again for each). Pure.
 */
export function textFrame(payload: Buffer): Buffer {
  const length = payload.length;
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81;
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  payload.copy(frame, headerLength);
  return frame;
}
