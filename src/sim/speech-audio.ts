/**
 * Silent audio files in the six formats of OpenAI's createSpeech (`response_format`), for the
 * simulator: each starts as the real format does (MP3 frames, an Ogg page carrying OpusHead, ADTS
 * frames, a FLAC STREAMINFO block, a RIFF/WAVE header) and its length follows the duration. OpenAI's
 * speech is 24 kHz mono (the text-to-speech guide's pcm: 24 kHz 16-bit little-endian); the MP3 is the
 * simulator's usual 44.1 kHz silence (elevenlabs.ts).
 */
import { silentMp3 } from './elevenlabs.js';

/** Sample rate of the non-MP3 formats, as OpenAI's pcm. */
const RATE = 24_000;

/** 16-bit mono samples of `seconds` (at least one). */
const samples = (seconds: number): number => Math.max(1, Math.round(seconds * RATE));

/** The CRC-32 of Ogg pages (polynomial 0x04c11db7, not reflected, initial 0). */
function oggCrc(data: Buffer): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 24;
    for (let i = 0; i < 8; i++) crc = crc & 0x80000000 ? ((crc << 1) ^ 0x04c11db7) >>> 0 : (crc << 1) >>> 0;
  }
  return crc >>> 0;
}

/** One Ogg page holding `packet` (under 255 bytes). */
function oggPage(packet: Buffer, headerType: number, granule: bigint, sequence: number): Buffer {
  const head = Buffer.alloc(27 + 1);
  head.write('OggS', 0, 'latin1');
  head[5] = headerType;
  head.writeBigUInt64LE(granule, 6);
  head.writeUInt32LE(0x5349_4d31, 14); // stream serial "SIM1"
  head.writeUInt32LE(sequence, 18);
  head[26] = 1;
  head[27] = packet.length;
  const page = Buffer.concat([head, packet]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

/** Ogg Opus: the OpusHead page, then one page of silence sized for the duration (the granule counts 48 kHz samples). */
function silentOpus(seconds: number): Buffer {
  const opusHead = Buffer.alloc(19);
  opusHead.write('OpusHead', 0, 'latin1');
  opusHead[8] = 1; // version
  opusHead[9] = 1; // mono
  opusHead.writeUInt32LE(RATE, 12);
  const frames = Math.max(1, Math.round(seconds * 50)); // 20 ms packets
  const silence = Buffer.alloc(Math.min(254, frames), 0xf8); // TOC byte of a 20 ms CELT frame
  return Buffer.concat([oggPage(opusHead, 2, 0n, 0), oggPage(silence, 4, BigInt(frames * 960), 1)]);
}

/** ADTS AAC-LC frames (24 kHz mono), one per 1024 samples, each header and an empty payload. */
function silentAac(seconds: number): Buffer {
  const frames = Math.max(1, Math.round((seconds * RATE) / 1024));
  const length = 9;
  const frame = Buffer.from([0xff, 0xf1, (1 << 6) | (6 << 2), (1 << 6) | (length >> 11), (length >> 3) & 0xff, ((length & 7) << 5) | 0x1f, 0xfc, 0x00, 0x00]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

/** fLaC and a last STREAMINFO block (24 kHz, mono, 16 bits, the total samples), no audio frames. */
function silentFlac(seconds: number): Buffer {
  const info = Buffer.alloc(34);
  info.writeUInt16BE(4096, 0);
  info.writeUInt16BE(4096, 2);
  const total = BigInt(samples(seconds));
  // 20 bits rate, 3 bits channels-1, 5 bits bits-per-sample-1, 36 bits total samples.
  const packed = (BigInt(RATE) << 44n) | (0n << 41n) | (15n << 36n) | total;
  info.writeBigUInt64BE(packed, 10);
  return Buffer.concat([Buffer.from('fLaC', 'latin1'), Buffer.from([0x80, 0, 0, 34]), info]);
}

/** Headerless 16-bit little-endian silence. */
const silentPcm = (seconds: number): Buffer => Buffer.alloc(samples(seconds) * 2);

/** A RIFF/WAVE file of 16-bit mono PCM silence. */
function silentWav(seconds: number): Buffer {
  const data = silentPcm(seconds);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8, 'latin1');
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20);
  head.writeUInt16LE(1, 22);
  head.writeUInt32LE(RATE, 24);
  head.writeUInt32LE(RATE * 2, 28);
  head.writeUInt16LE(2, 32);
  head.writeUInt16LE(16, 34);
  head.write('data', 36, 'latin1');
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

/** Each format's media type (as the vendor answers it) and its silent file. */
export const SPEECH_FILES: Readonly<Record<string, { contentType: string; silent: (seconds: number) => Buffer }>> = {
  mp3: { contentType: 'audio/mpeg', silent: silentMp3 },
  opus: { contentType: 'audio/opus', silent: silentOpus },
  aac: { contentType: 'audio/aac', silent: silentAac },
  flac: { contentType: 'audio/flac', silent: silentFlac },
  wav: { contentType: 'audio/wav', silent: silentWav },
  pcm: { contentType: 'audio/pcm', silent: silentPcm },
};
