/**
 * The payer pages' icon as a 16x16 ICO (one 32-bit bitmap): a blue card with a white stripe, drawn
 * here so browsers asking for `/favicon.ico` get an icon, not a 404, and nothing is loaded from elsewhere.
 */
function draw(): Buffer {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      // Bitmaps are stored bottom-up: row 0 is the bottom line.
      const top = size - 1 - y;
      const inCard = top >= 3 && top <= 12 && x >= 1 && x <= 14;
      const stripe = top >= 5 && top <= 6;
      const offset = (y * size + x) * 4;
      const [b, g, r, a] = !inCard ? [0, 0, 0, 0] : stripe ? [255, 255, 255, 255] : [0xd8, 0x4e, 0x1d, 255];
      pixels.writeUInt8(b, offset);
      pixels.writeUInt8(g, offset + 1);
      pixels.writeUInt8(r, offset + 2);
      pixels.writeUInt8(a, offset + 3);
    }
  }
  const mask = Buffer.alloc(size * 4); // AND mask, 32-bit rows; the alpha channel decides instead
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(size, 4);
  header.writeInt32LE(size * 2, 8); // colour bitmap and mask, stacked
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  const image = Buffer.concat([header, pixels, mask]);
  const directory = Buffer.alloc(22);
  directory.writeUInt16LE(0, 0);
  directory.writeUInt16LE(1, 2); // icon
  directory.writeUInt16LE(1, 4); // one image
  directory.writeUInt8(size, 6);
  directory.writeUInt8(size, 7);
  directory.writeUInt16LE(1, 10);
  directory.writeUInt16LE(32, 12);
  directory.writeUInt32LE(image.length, 14);
  directory.writeUInt32LE(22, 18);
  return Buffer.concat([directory, image]);
}

export const FAVICON_ICO: Buffer = draw();
