/** WAV files built in tests (spec 4.8 billing edges): PCM silence of an exact length, no large fixtures committed. */

/**
 * A PCM WAV of `samples` frames of silence: 16-bit mono at `rate` Hz (default 8 kHz), so its
 * duration is exactly samples / rate seconds (59.9 s = 479,200 samples, about 958 kB).
 */
export function silentWav(samples: number, rate = 8000): Buffer {
  const bytes = samples * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + bytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(bytes, 40);
  return Buffer.concat([header, Buffer.alloc(bytes)]);
}

/** A WAV of `tenths` tenths of a second at 8 kHz (599 -> 59.9 s), exact in samples. */
export function wavOfTenths(tenths: number): Buffer {
  return silentWav(tenths * 800);
}

/**
 * A 0.1 s WAV whose every byte is below 0x80 (8-bit PCM mono at 8 kHz, samples 0x00): it survives a
 * path that decodes bodies as UTF-8 text (a Prism proxy), unlike 16-bit PCM or MP3 frames.
 */
export function sevenBitWav(samples = 800): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28); // byte rate
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(samples, 40);
  const wav = Buffer.concat([header, Buffer.alloc(samples)]);
  if (wav.some((b) => b >= 0x80)) throw new Error('sevenBitWav: a byte is not 7-bit');
  return wav;
}
